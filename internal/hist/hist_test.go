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
