package coord

import "testing"

func TestBackoffDoublesToMaxWithJitter(t *testing.T) {
	b := NewBackoff(2, 600, 1)
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
	one := NewBackoff(1, 1, 7)
	for range 20 {
		if got := one.Delay(3); got != 1 {
			t.Fatalf("backoff 1..1 gave %d", got)
		}
	}
}

func TestBackoffJitterIsSeeded(t *testing.T) {
	a, b, c := NewBackoff(100, 30000, 42), NewBackoff(100, 30000, 42), NewBackoff(100, 30000, 43)
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
	b := NewBackoff(1<<62, 1<<62+1, 3)
	for n := 1; n < 100; n++ {
		if d := b.Delay(n); d <= 0 {
			t.Fatalf("delay %d = %d", n, d)
		}
	}
}
