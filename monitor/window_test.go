package monitor

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

// committed returns totals with n batches committed and a component that
// executed 2n tuples.
func committed(n uint64) totals {
	return totals{Batches: batchTotals{Committed: n}, Components: map[string]componentTotals{"b": {Executed: 2 * n}}}
}

func TestRing(t *testing.T) {
	r := newRing(10*time.Second, 4)
	if _, ok := r.base(t0); ok {
		t.Fatal("an empty ring has a base")
	}
	for i := range 10 {
		r.add(snapshot{At: t0.Add(time.Duration(i) * 5 * time.Second), Totals: committed(uint64(i))})
	}
	// Kept: every other one (10 s apart), the newest 4: 0 s .. 45 s at 10 s
	// steps keeps 0, 10, 20, 30, 40 → the ring holds 10, 20, 30, 40.
	if r.n != 4 || r.get(0).At != t0.Add(10*time.Second) || r.newest().At != t0.Add(40*time.Second) {
		t.Fatalf("kept %d, oldest %v, newest %v", r.n, r.get(0).At, r.newest().At)
	}
	for _, c := range []struct {
		at, want time.Duration
	}{{25 * time.Second, 20 * time.Second}, {30 * time.Second, 30 * time.Second}, {time.Hour, 40 * time.Second}, {0, 10 * time.Second}} {
		if s, _ := r.base(t0.Add(c.at)); s.At != t0.Add(c.want) {
			t.Errorf("base(%v) = %v, want %v", c.at, s.At.Sub(t0), c.want)
		}
	}
}

func TestWindows(t *testing.T) {
	w := newWindows()
	// One batch every 10 s for 25 hours, sampled every 10 s.
	const step = 10 * time.Second
	var now time.Time
	var n uint64
	for now = t0; now.Sub(t0) <= 25*time.Hour; now = now.Add(step) {
		w.record(snapshot{At: now, Totals: committed(n)})
		n++
	}
	now, n = now.Add(-step), n-1 // the last recorded
	got := w.windowsAt(now, committed(n))
	want := []struct {
		name  string
		span  time.Duration
		grown uint64
	}{
		{"10m", 10 * time.Minute, 60},
		{"3h", 3 * time.Hour, 3 * 360},
		{"1d", 24 * time.Hour, 24 * 360},
		{"all", 25 * time.Hour, n},
	}
	if len(got) != len(want) {
		t.Fatalf("%d windows: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Span != w.span || g.Growth.Batches.Committed != w.grown || g.Growth.Components["b"].Executed != 2*w.grown {
			t.Errorf("window %d: %s over %v: %d committed, %d executed; want %s over %v: %d",
				i, g.Name, g.Span, g.Growth.Batches.Committed, g.Growth.Components["b"].Executed, w.name, w.span, w.grown)
		}
	}

	// Between samples the current figures count: 7 more batches 5 s on.
	// The base is the sample at or before the window's start, 10 minutes
	// and 5 seconds back: the span says so.
	got = w.windowsAt(now.Add(5*time.Second), committed(n+7))
	if g := got[0]; g.Growth.Batches.Committed != 60+7 || g.Span != 10*time.Minute+5*time.Second {
		t.Errorf("10m 5 s after a sample: %d over %v, want 67 over 10m5s", g.Growth.Batches.Committed, g.Span)
	}
}

func TestWindowsYoungTopology(t *testing.T) {
	w := newWindows()
	w.record(snapshot{At: t0, Totals: committed(100)}) // registered after 100 batches
	w.record(snapshot{At: t0.Add(time.Minute), Totals: committed(110)})
	got := w.windowsAt(t0.Add(5*time.Minute), committed(150))
	for _, g := range got[:3] {
		// Every window starts at the registration: 5 minutes, 50 batches.
		if g.Span != 5*time.Minute || g.Growth.Batches.Committed != 50 {
			t.Errorf("%s: %d over %v, want 50 over 5m", g.Name, g.Growth.Batches.Committed, g.Span)
		}
	}
	if all := got[3]; all.Name != windowAll || all.Span != 5*time.Minute || all.Growth.Batches.Committed != 150 {
		t.Errorf("all: %+v", all)
	}
	// Without any snapshot, the windows are empty.
	for _, g := range newWindows().windowsAt(t0, committed(3))[:3] {
		if g.Span != 0 || g.Growth.Batches.Committed != 0 {
			t.Errorf("%s without snapshots: %+v", g.Name, g)
		}
	}
}

func TestGrowthReset(t *testing.T) {
	old := totals{Batches: batchTotals{Committed: 10, FailedAttempts: 4},
		Components: map[string]componentTotals{"a": {Emitted: 9, Failed: 3}, "gone": {Emitted: 1}}}
	now := totals{Batches: batchTotals{Committed: 12, FailedAttempts: 1},
		Components: map[string]componentTotals{"a": {Emitted: 2, Failed: 5}, "new": {Emitted: 7}}}
	d := growth(old, now)
	if d.Batches.Committed != 2 || d.Batches.FailedAttempts != 1 {
		t.Errorf("batches %+v", d.Batches)
	}
	if a := d.Components["a"]; a.Emitted != 2 || a.Failed != 2 {
		t.Errorf("a: %+v (a counter that went down counts from zero)", a)
	}
	if d.Components["new"].Emitted != 7 || len(d.Components) != 2 {
		t.Errorf("components %+v", d.Components)
	}
}
