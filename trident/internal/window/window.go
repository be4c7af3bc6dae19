// Package window is the pure core of Trident windows: it assigns a
// batch's items to tumbling or sliding windows, advances the watermark and
// decides which windows fire, as a function of the state committed by the
// previous batch and of the batch alone. It has no goroutines, clock,
// storage or tuples; the shell in package trident feeds it encoded tuples
// and stores the State it returns under the batch's txid.
//
// Every kind of window is one scheme over an int64 axis: event time and
// processing time in nanoseconds since the Unix epoch, or, for count
// windows, the sequence number of the item (0, 1, 2 … in arrival order).
// Window k covers [k·Slide, k·Slide+Length); a tumbling window has
// Slide == Length. An item at position t belongs to every window whose
// start is a multiple of Slide in (t-Length, t]; so the first sliding
// windows of a count window start before 0 and hold fewer than Length
// items, as Storm's do.
//
// A window [s, e) fires, once, in the batch that moves the watermark W to
// e or beyond, provided it holds at least one item. The watermark of a
// batch is computed at its end, after all its items are placed, so the
// items of one batch are never late with respect to each other:
//
//   - Count: W is the number of items seen.
//   - ProcessingTime: every item of the batch gets the batch's time (the
//     shell reads its clock once per batch and stores it), and W is that
//     time.
//   - EventTime: W is the largest event time seen minus the allowed
//     lateness, and never goes back.
//
// An item is late if every window it belongs to has already fired when it
// arrives (the last such window ends at or before the watermark of the
// previous batch). Late items are dropped and returned, so the shell can
// count them. Items are kept until the last window they belong to has
// fired.
//
// Within a batch, items are ordered by (position, data) before they are
// numbered or stored, so the result does not depend on the order in which
// the batch's tuples happened to arrive.
package window

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Mode is what a window's axis measures.
type Mode uint8

const (
	// Count windows count items.
	Count Mode = iota
	// ProcessingTime windows use the time at which a batch was processed.
	ProcessingTime
	// EventTime windows use a time carried by each item.
	EventTime
)

func (m Mode) String() string {
	switch m {
	case Count:
		return "count"
	case ProcessingTime:
		return "processing time"
	case EventTime:
		return "event time"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Spec describes a window.
type Spec struct {
	Mode     Mode
	Length   int64 // items or nanoseconds; > 0
	Slide    int64 // items or nanoseconds; 0 < Slide <= Length; == Length for tumbling
	Lateness int64 // event time only: how far the watermark trails the largest event time; >= 0
}

// Validate reports what is wrong with s.
func (s Spec) Validate() error {
	var errs []error
	if s.Mode > EventTime {
		errs = append(errs, fmt.Errorf("window: unknown mode %d", s.Mode))
	}
	if s.Length <= 0 {
		errs = append(errs, fmt.Errorf("window: length %d must be positive", s.Length))
	}
	if s.Slide <= 0 || s.Slide > s.Length {
		errs = append(errs, fmt.Errorf("window: slide %d must be positive and at most the length %d", s.Slide, s.Length))
	}
	if s.Lateness < 0 {
		errs = append(errs, fmt.Errorf("window: allowed lateness %d must not be negative", s.Lateness))
	}
	if s.Lateness > 0 && s.Mode != EventTime {
		errs = append(errs, errors.New("window: allowed lateness applies to event time only"))
	}
	return errors.Join(errs...)
}

// Item is one tuple, encoded by the shell, at a position on the axis.
type Item struct {
	Pos  int64 // event time (EventTime); set by Advance otherwise
	Data []byte
}

// NoWatermark is the watermark before any batch.
const NoWatermark int64 = math.MinInt64

// State is what a window keeps between batches: the shell stores it with
// each batch's txid.
type State struct {
	Watermark int64  // windows ending at or before it have fired
	Seen      int64  // items accepted so far (the next sequence number of a count window)
	Late      int64  // items dropped as late so far
	Items     []Item // kept items, ordered by (Pos, Data)
}

// Initial returns the state before the first batch.
func Initial() State { return State{Watermark: NoWatermark} }

// Window is a fired window and its items, ordered by (Pos, Data).
type Window struct {
	Start, End int64
	Items      []Item
}

// Advance applies one batch to st: batch holds the batch's items (with
// their event times in EventTime mode), now is the batch's time
// (ProcessingTime mode only). It returns the new state, the windows that
// fire, in order of their end, and the late items dropped. It does not
// modify st or batch.
func Advance(spec Spec, st State, batch []Item, now int64) (State, []Window, []Item) {
	in := slices.Clone(batch)
	switch spec.Mode {
	case ProcessingTime:
		now = max(now, st.Watermark) // a clock that steps back does not make items late
		for i := range in {
			in[i].Pos = now
		}
	case Count:
		slices.SortFunc(in, func(a, b Item) int { return bytes.Compare(a.Data, b.Data) })
		for i := range in {
			in[i].Pos = st.Seen + int64(i)
		}
	}
	slices.SortStableFunc(in, compareItems)

	next := State{Watermark: st.Watermark, Seen: st.Seen, Late: st.Late}
	var late []Item
	kept := in[:0]
	for _, it := range in {
		if spec.lastEnd(it.Pos) <= st.Watermark {
			late = append(late, it)
			continue
		}
		kept = append(kept, it)
	}
	next.Late += int64(len(late))
	next.Seen += int64(len(kept))
	items := mergeItems(st.Items, kept)

	switch spec.Mode {
	case Count:
		next.Watermark = next.Seen
	case ProcessingTime:
		next.Watermark = max(st.Watermark, now)
	case EventTime:
		for _, it := range kept {
			next.Watermark = max(next.Watermark, sub(it.Pos, spec.Lateness))
		}
	}
	fired := spec.fire(items, st.Watermark, next.Watermark)
	for _, it := range items {
		if spec.lastEnd(it.Pos) > next.Watermark {
			next.Items = append(next.Items, it)
		}
	}
	return next, fired, late
}

// fire returns the windows with an end in (from, to] that hold an item.
// When few windows end in that range (the usual step of a watermark), it
// looks each one up; otherwise (the first batch, a jump) it enumerates
// the windows of each item.
func (s Spec) fire(items []Item, from, to int64) []Window {
	if to <= from || len(items) == 0 {
		return nil
	}
	var starts []int64
	if n, ok := s.endsIn(from, to); ok && n <= int64(len(items)) {
		for st := s.lastStart(from-s.Length) + s.Slide; st+s.Length <= to; st += s.Slide {
			if i := s.search(items, st); i < len(items) && items[i].Pos < st+s.Length {
				starts = append(starts, st)
			}
		}
	} else {
		for _, it := range items {
			for st := s.firstStart(it.Pos); st <= it.Pos; st += s.Slide {
				if e := st + s.Length; e > from && e <= to {
					starts = append(starts, st)
				}
			}
		}
		slices.Sort(starts)
		starts = slices.Compact(starts)
	}
	out := make([]Window, 0, len(starts))
	for _, st := range starts {
		w := Window{Start: st, End: st + s.Length}
		for _, it := range items[s.search(items, st):] {
			if it.Pos >= w.End {
				break
			}
			w.Items = append(w.Items, it)
		}
		out = append(out, w)
	}
	return out
}

// endsIn returns about how many windows end in (from, to], if that can be
// computed without overflow.
func (s Spec) endsIn(from, to int64) (int64, bool) {
	if from < NoWatermark/2 || to > math.MaxInt64/2 || from < 0 && to > 0 && to > math.MaxInt64+from {
		return 0, false
	}
	return (to-from)/s.Slide + 1, true
}

// search returns the index of the first item at or after pos.
func (s Spec) search(items []Item, pos int64) int {
	i, _ := slices.BinarySearchFunc(items, pos, func(it Item, p int64) int { return cmp.Compare(it.Pos, p) })
	return i
}

// firstStart is the start of the earliest window holding pos.
func (s Spec) firstStart(pos int64) int64 { return s.lastStart(pos-s.Length) + s.Slide }

// lastStart is the start of the latest window holding pos.
func (s Spec) lastStart(pos int64) int64 { return floorDiv(pos, s.Slide) * s.Slide }

// lastEnd is the end of the latest window holding pos.
func (s Spec) lastEnd(pos int64) int64 { return s.lastStart(pos) + s.Length }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// sub is a - b, saturating at NoWatermark.
func sub(a, b int64) int64 {
	if a < NoWatermark+b {
		return NoWatermark
	}
	return a - b
}

func compareItems(a, b Item) int {
	if c := cmp.Compare(a.Pos, b.Pos); c != 0 {
		return c
	}
	return bytes.Compare(a.Data, b.Data)
}

// mergeItems merges two lists ordered by compareItems into a new one.
func mergeItems(a, b []Item) []Item {
	out := make([]Item, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compareItems(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}
