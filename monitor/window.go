package monitor

import (
	"time"

	"github.com/squallstream/squall/topology"
)

// Windowed counters: how much each counter grew over the last 10 minutes,
// 3 hours, day, and since the topology was submitted. The counters of a
// topology are cumulative, so a window's figure is the total now minus the
// total at the window's start; the totals at past times come from
// snapshots that the registry records periodically (Registry.Sample), kept
// in one ring per window. This file is pure: the caller passes the time.

// windowSpec is one window: its length and the ring that serves it, whose
// snapshots are step apart.
type windowSpec struct {
	Name string        // "10m", "3h", "1d"
	Len  time.Duration // the window
	Step time.Duration // between two kept snapshots
}

// windowSpecs are the windows shown, shortest first; "all" follows them.
var windowSpecs = [...]windowSpec{
	{Name: "10m", Len: 10 * time.Minute, Step: 10 * time.Second},
	{Name: "3h", Len: 3 * time.Hour, Step: time.Minute},
	{Name: "1d", Len: 24 * time.Hour, Step: 10 * time.Minute},
}

// windowAll names the window since submission.
const windowAll = "all"

// totals are the cumulative counters of a topology at one time.
type totals struct {
	Batches    batchTotals
	Components map[string]componentTotals
}

type batchTotals struct {
	Committed, FailedAttempts, DeadLetters uint64
}

type componentTotals struct {
	Emitted, Executed, Acked, Failed, Errors uint64
	Busy                                     time.Duration // bolts: time executing
}

// totalsOf reads the counters of a topology's figures; b is nil for a
// tuple-level topology.
func totalsOf(stats topology.Stats, b Batches) totals {
	t := totals{Components: make(map[string]componentTotals, len(stats.Components))}
	for name, c := range stats.Components {
		t.Components[name] = componentTotals{Emitted: c.Emitted, Executed: c.Executed, Acked: c.Acked, Failed: c.Failed, Errors: c.Errors, Busy: c.Busy}
	}
	if b != nil {
		t.Batches = batchTotals{Committed: b.BatchLatency().Count, FailedAttempts: b.FailedAttempts(), DeadLetters: b.Rejected()}
	}
	return t
}

// growth returns by how much each counter grew from old to now. A counter
// that went down was reset (it cannot, in one submission, but a figure is
// never negative): its growth is its value now.
func growth(old, now totals) totals {
	d := totals{
		Batches: batchTotals{
			Committed:      grew(old.Batches.Committed, now.Batches.Committed),
			FailedAttempts: grew(old.Batches.FailedAttempts, now.Batches.FailedAttempts),
			DeadLetters:    grew(old.Batches.DeadLetters, now.Batches.DeadLetters),
		},
		Components: make(map[string]componentTotals, len(now.Components)),
	}
	for name, n := range now.Components {
		o := old.Components[name]
		d.Components[name] = componentTotals{
			Emitted: grew(o.Emitted, n.Emitted), Executed: grew(o.Executed, n.Executed),
			Acked: grew(o.Acked, n.Acked), Failed: grew(o.Failed, n.Failed), Errors: grew(o.Errors, n.Errors),
			Busy: time.Duration(grew(uint64(o.Busy), uint64(n.Busy))),
		}
	}
	return d
}

func grew(old, now uint64) uint64 {
	if now < old {
		return now
	}
	return now - old
}

// snapshot is the totals at a time.
type snapshot struct {
	At     time.Time
	Totals totals
}

// ring keeps snapshots at least step apart, the newest cap of them.
type ring struct {
	step time.Duration
	buf  []snapshot // circular
	next int        // where the next snapshot goes
	n    int        // how many are kept
}

func newRing(step time.Duration, capacity int) *ring {
	return &ring{step: step, buf: make([]snapshot, capacity)}
}

// add keeps s unless the newest kept snapshot is less than step older.
func (r *ring) add(s snapshot) {
	if r.n > 0 && s.At.Sub(r.newest().At) < r.step {
		return
	}
	r.buf[r.next] = s
	r.next = (r.next + 1) % len(r.buf)
	r.n = min(r.n+1, len(r.buf))
}

func (r *ring) newest() snapshot { return r.buf[(r.next-1+len(r.buf))%len(r.buf)] }

// get returns the i-th kept snapshot, oldest first.
func (r *ring) get(i int) snapshot { return r.buf[(r.next-r.n+i+len(r.buf))%len(r.buf)] }

// base returns the newest snapshot taken at or before t, or the oldest
// kept if all are later; false if none is kept.
func (r *ring) base(t time.Time) (snapshot, bool) {
	if r.n == 0 {
		return snapshot{}, false
	}
	best := r.get(0)
	for i := 1; i < r.n; i++ {
		s := r.get(i)
		if s.At.After(t) {
			break
		}
		best = s
	}
	return best, true
}

// windows are the rings of one topology, with its first snapshot.
type windows struct {
	first snapshot // the first recorded: the start of "all"
	rings [len(windowSpecs)]*ring
}

func newWindows() *windows {
	w := &windows{}
	for i, s := range windowSpecs {
		// The base of a window is up to one step older than its start:
		// keep len/step snapshots, one for that step and one spare.
		w.rings[i] = newRing(s.Step, int(s.Len/s.Step)+2)
	}
	return w
}

// record keeps the totals at a time, in every ring that is due.
func (w *windows) record(s snapshot) {
	if w.rings[0].n == 0 {
		w.first = s
	}
	for _, r := range w.rings {
		r.add(s)
	}
}

// window is the growth of the counters over one window.
type window struct {
	Name string
	// Span is the time the growth covers: the window's length, rounded
	// to the snapshots, or less while the topology is younger than the
	// window; for "all", the time since the first snapshot.
	Span   time.Duration
	Growth totals
}

// windowsAt returns the growth over each window up to now, whose totals
// are cur, shortest first, "all" last. "all" is cur itself: the counters
// start at zero when the topology is submitted. Without any snapshot, the
// windows start now.
func (w *windows) windowsAt(now time.Time, cur totals) []window {
	out := make([]window, 0, len(windowSpecs)+1)
	for i, spec := range windowSpecs {
		base, ok := w.rings[i].base(now.Add(-spec.Len))
		if !ok || base.At.After(now) {
			base = snapshot{At: now, Totals: cur}
		}
		out = append(out, window{Name: spec.Name, Span: now.Sub(base.At), Growth: growth(base.Totals, cur)})
	}
	span := time.Duration(0)
	if w.rings[0].n > 0 && !w.first.At.After(now) {
		span = now.Sub(w.first.At)
	}
	return append(out, window{Name: windowAll, Span: span, Growth: growth(totals{}, cur)})
}
