package trident

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/trident/internal/window"
	"github.com/squallstream/squall/trident/windowstore"
)

// WindowsStore keeps the state of windows and the windows each batch
// fired, per window task and txid (see package windowstore).
type WindowsStore = windowstore.Store

// The fields a window's output tuples carry before the aggregator's
// output: the bounds [start, end) of the window. For duration windows
// they are time.Time values (UTC); for count windows int64 sequence
// numbers of the items (a sliding count window's first windows start
// before 0).
const (
	WindowStart = "windowStart"
	WindowEnd   = "windowEnd"
)

// WindowSpec describes a window: tumbling or sliding, by count or by
// duration, on processing time (the default for durations) or event time.
// Make one with TumblingCount, SlidingCount, TumblingDuration or
// SlidingDuration and refine it with EventTime, AllowedLateness and Name.
type WindowSpec struct {
	spec      window.Spec
	timeField string
	name      string
	err       error
}

// TumblingCount is a window of n tuples, firing every n tuples.
func TumblingCount(n int) WindowSpec { return SlidingCount(n, n) }

// SlidingCount is a window of the last n tuples, firing every slide
// tuples (the first windows hold fewer than n).
func SlidingCount(n, slide int) WindowSpec {
	return WindowSpec{spec: window.Spec{Mode: window.Count, Length: int64(n), Slide: int64(slide)}}
}

// TumblingDuration is a window of length d, aligned to multiples of d
// since the Unix epoch.
func TumblingDuration(d time.Duration) WindowSpec { return SlidingDuration(d, d) }

// SlidingDuration is a window of the given length starting every slide
// (aligned to multiples of slide since the Unix epoch): with 15 minutes
// and 1 minute, windows [12:00, 12:15), [12:01, 12:16) … On processing
// time unless EventTime is set.
func SlidingDuration(length, slide time.Duration) WindowSpec {
	return WindowSpec{spec: window.Spec{Mode: window.ProcessingTime, Length: int64(length), Slide: int64(slide)}}
}

// EventTime places each tuple by the time.Time in field instead of the
// batch's processing time. The watermark is the largest event time seen
// so far minus the allowed lateness, computed at the end of each batch; a
// window fires in the batch that moves the watermark to its end or beyond.
// A tuple is late when every window it belongs to has fired: it is
// dropped and counted (WindowLate). A tuple whose field is not a
// time.Time is rejected (Reject).
func (w WindowSpec) EventTime(field string) WindowSpec {
	if w.spec.Mode == window.Count {
		w.err = fmt.Errorf("EventTime(%q) on a count window", field)
	}
	w.spec.Mode, w.timeField = window.EventTime, field
	return w
}

// AllowedLateness is how far the watermark of an event-time window trails
// the largest event time seen: a tuple up to d older than that still
// counts, at the price of windows firing d later.
func (w WindowSpec) AllowedLateness(d time.Duration) WindowSpec {
	w.spec.Lateness = int64(d)
	return w
}

// Name names the window's state in its WindowsStore. Keep it stable
// across deployments (the default derives from the topology's name and
// the declaration order) and unique among the windows sharing a store.
func (w WindowSpec) Name(name string) WindowSpec {
	w.name = name
	return w
}

// Tumbling reports whether windows do not overlap (the slide is the
// length): TumblingCount and TumblingDuration.
func (w WindowSpec) Tumbling() bool { return w.spec.Slide == w.spec.Length }

// Counted reports whether the window is measured in tuples (TumblingCount,
// SlidingCount) rather than in time.
func (w WindowSpec) Counted() bool { return w.spec.Mode == window.Count }

// Count returns the length and slide of a count window, in tuples (zeros
// for a time window).
func (w WindowSpec) Count() (length, slide int) {
	if !w.Counted() {
		return 0, 0
	}
	return int(w.spec.Length), int(w.spec.Slide)
}

// Duration returns the length and slide of a time window (zeros for a
// count window).
func (w WindowSpec) Duration() (length, slide time.Duration) {
	if w.Counted() {
		return 0, 0
	}
	return time.Duration(w.spec.Length), time.Duration(w.spec.Slide)
}

// TimeField returns the field EventTime places tuples by, "" on
// processing time or for a count window.
func (w WindowSpec) TimeField() string { return w.timeField }

// Lateness returns the allowed lateness of an event-time window.
func (w WindowSpec) Lateness() time.Duration { return time.Duration(w.spec.Lateness) }

// String describes the window as Storm's tooling would name it:
// "tumbling count 100", "sliding duration 15m0s every 1m0s", with
// " on event time of <field>" for event-time windows.
func (w WindowSpec) String() string {
	kind := "sliding"
	if w.Tumbling() {
		kind = "tumbling"
	}
	var s string
	if n, slide := w.Count(); w.Counted() {
		s = fmt.Sprintf("%s count %d", kind, n)
		if !w.Tumbling() {
			s += fmt.Sprintf(" every %d", slide)
		}
	} else {
		d, slide := w.Duration()
		s = fmt.Sprintf("%s duration %v", kind, d)
		if !w.Tumbling() {
			s += fmt.Sprintf(" every %v", slide)
		}
	}
	if w.timeField != "" {
		s += " on event time of " + w.timeField
	}
	return s
}

// Window aggregates the tuples of s, per partition (task), over the
// windows of spec: each time a window fires, agg runs over its tuples (the input fields,
// in the order of their time and then of their encoding) and each tuple
// it emits becomes an output tuple with the fields WindowStart, WindowEnd
// and outputs.
//
// Windows run in the commit phase of each batch, like PartitionPersist:
// the window's state after batch T and the output of the windows T fired
// are stored in store under T, so a replay of T emits exactly the same
// tuples, and the records of txids before the last committed one are
// deleted. Records are keyed by txid: keep the store as long as the
// coordination store (Config.Store) and drop both together, or a new
// topology's txid 1 would find the old one's records.
//
// Stored tuples go through msgpack: aggregators see signed integers as
// int64, unsigned ones as uint64, floats as float64 and times as
// time.Time, whether a tuple arrived in this batch or an earlier one.
func Window[S any](s *Stream, spec WindowSpec, store WindowsStore, input Fields, agg Aggregator[S], outputs ...string) *Stream {
	return windowNode(s, "Window", nil, spec, store, input, agg, outputs)
}

// WindowGroups is Window per group of g: within each fired window, agg
// runs once per group, and the output tuples start with the group fields.
func WindowGroups[S any](g *GroupedStream, spec WindowSpec, store WindowsStore, input Fields, agg Aggregator[S], outputs ...string) *Stream {
	return windowNode(g.s, "WindowGroups", g.fields, spec, store, input, agg, outputs)
}

func windowNode[S any](s *Stream, op string, group Fields, spec WindowSpec, store WindowsStore, input Fields, agg Aggregator[S], outputs []string) *Stream {
	s.checkFields(op, input)
	s.checkFields(op, group)
	fields := slices.Concat(group, Fields{WindowStart, WindowEnd}, Fields(outputs))
	s.checkOutputs(op, fields)
	if spec.err != nil {
		s.t.errorf("%s: %v", op, spec.err)
	}
	if err := spec.spec.Validate(); err != nil {
		s.t.errorf("%s: %v", op, err)
	}
	if spec.timeField != "" {
		s.checkFields(op, Fields{spec.timeField})
	}
	if store == nil || agg == nil {
		s.t.errorf("%s: nil windows store or aggregator", op)
	}
	if len(outputs) == 0 {
		s.t.errorf("%s: no output fields", op)
	}
	name := spec.name
	if name == "" {
		name = s.t.name + "/window" + strconv.Itoa(len(s.t.nodes))
	}
	for _, n := range s.t.nodes {
		if p, ok := n.op.(*exec.Persist); ok {
			if w, ok := p.P.(interface{ windowName() string }); ok && w.windowName() == name {
				s.t.errorf("%s: a window named %q already exists", op, name)
			}
		}
	}
	stored := slices.Concat(group, input)
	w := &windowOp[S]{name: name, spec: spec.spec, store: store, agg: agg,
		stored: s.n.sch.indexes(stored), nGroup: len(group), inSch: newSchema(slices.Clone(input)), timeIdx: -1}
	if spec.timeField != "" {
		w.timeIdx = s.n.sch.index[spec.timeField]
	}
	in := slices.Clone(stored)
	if spec.timeField != "" && !slices.Contains(in, spec.timeField) {
		in = append(in, spec.timeField)
	}
	n := &node{op: &exec.Persist{P: w, In: in}, parent: s.n, sch: newSchema(fields)}
	return &Stream{t: s.t, n: s.t.add(n)}
}
