package backoff

import "testing"

func TestBackoffDoublesToMaxWithJitter(t *testing.T) {
	b := New(2, 600, 1)
	for n := 1; n <= 20; n++ {
		d := int64(2) << (n - 1)
		if n > 9 {
			d = 600
		}
		for range 50 {
			got := b.Delay(n)
			if got < d-d/2 || got > d {
				t.Fatalf("delay %d = %d, want in [%d, %d]", n, got, d-d/2, d)
			}
		}
	}
	if got := b.Delay(0); got != 0 {
		t.Fatalf("delay before any failure = %d", got)
	}
	var zero Backoff
	if got := zero.Delay(5); got != 0 {
		t.Fatalf("zero backoff waits %d", got)
	}
	one := New(1, 1, 7)
	for range 20 {
		if got := one.Delay(3); got != 1 {
			t.Fatalf("backoff 1..1 gave %d", got)
		}
	}
}

func TestBackoffJitterIsSeeded(t *testing.T) {
	a, b, c := New(100, 30000, 42), New(100, 30000, 42), New(100, 30000, 43)
	same, differ := true, false
	for n := 1; n <= 30; n++ {
		x, y, z := a.Delay(n), b.Delay(n), c.Delay(n)
		same = same && x == y
		differ = differ || x != z
	}
	if !same || !differ {
		t.Fatalf("same seed same delays: %v; other seed differs: %v", same, differ)
	}
}

func TestBackoffHugeBoundsDoNotOverflow(t *testing.T) {
	b := New(1<<62, 1<<62+1, 3)
	for n := 1; n < 100; n++ {
		if d := b.Delay(n); d <= 0 {
			t.Fatalf("delay %d = %d", n, d)
		}
	}
}

func TestExponentialDoesNotJitter(t *testing.T) {
	b := Exponential(10, 1000)
	want := []int64{0, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for n, w := range want {
		if got := b.Delay(n); got != w {
			t.Fatalf("delay %d = %d, want %d", n, got, w)
		}
	}
}

func TestSequenceCountsAndResets(t *testing.T) {
	s := Sequence{Backoff: Exponential(5, 100)}
	for i, want := range []int64{5, 10, 20, 40, 80, 100, 100} {
		if got := s.Next(); got != want {
			t.Fatalf("failure %d: delay %d, want %d", i+1, got, want)
		}
	}
	if s.Failures() != 7 {
		t.Fatalf("Failures = %d, want 7", s.Failures())
	}
	s.Reset()
	if got := s.Next(); got != 5 || s.Failures() != 1 {
		t.Fatalf("after Reset: delay %d (want 5), failures %d (want 1)", got, s.Failures())
	}
}
