package hist

import (
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	s := h.Summary()
	near := func(got, want time.Duration) bool {
		d := got - want
		return d > -want/10 && d < want/10
	}
	if s.Count != 1000 || !near(s.P50, 500*time.Microsecond) || !near(s.P99, 990*time.Microsecond) || s.Max != time.Millisecond {
		t.Fatalf("summary = %+v", s)
	}
	for v := uint64(0); v < 1<<20; v = v*3/2 + 1 {
		if b := bucketOf(v); bucketMid(b) > v*2+1 || bucketOf(bucketMid(b)) != b {
			t.Fatalf("value %d: bucket %d has mid %d", v, b, bucketMid(b))
		}
	}
}

// RecordN(d, n) is n calls of Record(d).
func TestHistogramRecordN(t *testing.T) {
	var a, b Histogram
	for i := 1; i <= 100; i++ {
		d := time.Duration(i) * time.Millisecond
		a.RecordN(d, uint64(i))
		for range i {
			b.Record(d)
		}
	}
	a.RecordN(time.Hour, 0)
	if sa, sb := a.Summary(), b.Summary(); sa != sb || sa.Count != 5050 || sa.Max != 100*time.Millisecond {
		t.Fatalf("RecordN %+v, Record %+v", sa, sb)
	}
}

// The counts below each bound and the sum are exact.
func TestHistogramBelowAndSum(t *testing.T) {
	var h Histogram
	var sum time.Duration
	values := []time.Duration{0, 5 * time.Microsecond, 8191, 8192, 8193, 100 * time.Microsecond,
		time.Millisecond, 3 * time.Second, time.Minute, 2 * time.Minute}
	for _, d := range values {
		h.Record(d)
		sum += d
	}
	h.RecordN(time.Second, 3)
	values = append(values, time.Second, time.Second, time.Second)
	sum += 3 * time.Second
	s := h.Summary()
	if s.Sum != sum || s.Count != uint64(len(values)) {
		t.Fatalf("sum %v count %d, want %v %d", s.Sum, s.Count, sum, len(values))
	}
	for i, b := range Bounds {
		want := uint64(0)
		for _, d := range values {
			if d < b {
				want++
			}
		}
		if s.Below[i] != want {
			t.Errorf("below %v: %d, want %d", b, s.Below[i], want)
		}
	}
}
