package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
)

// maxDetails is how many mismatches a diff describes.
const maxDetails = 10

// diff is the outcome of comparing a store with the expected results.
type diff struct {
	periods, timelines, extra int      // mismatched rows, of each kind
	details                   []string // the first few, described
	checkedPeriods            int
	checkedTimelines          int
}

func (d *diff) total() int { return d.periods + d.timelines + d.extra }

func (d *diff) add(format string, args ...any) {
	if len(d.details) < maxDetails {
		d.details = append(d.details, fmt.Sprintf(format, args...))
	}
}

func (d *diff) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d mismatches (%d presence rows, %d room hours, %d unexpected rows; checked %d rows and %d room hours)",
		d.total(), d.periods, d.timelines, d.extra, d.checkedPeriods, d.checkedTimelines)
	for _, s := range d.details {
		b.WriteString("\n  ")
		b.WriteString(s)
	}
	return b.String()
}

// compareStore compares every presence row and room hour in st with want,
// both ways: missing, different and unexpected entries all count.
func compareStore(ctx context.Context, st Store, want *room.Expected) (*diff, error) {
	d := &diff{checkedPeriods: len(want.Periods), checkedTimelines: len(want.Timelines)}
	seen := make(map[string]bool, len(want.Periods))
	err := st.ScanPresence(ctx, func(got room.Period) error {
		seen[got.Visit] = true
		w, ok := want.Periods[got.Visit]
		switch {
		case !ok:
			d.extra++
			d.add("presence %s: stored %s, but no event names this visit", got.Visit, describePeriod(got))
		case !got.Equal(w):
			d.periods++
			d.add("presence %s: stored %s, want %s", got.Visit, describePeriod(got), describePeriod(w))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scanning presence: %w", err)
	}
	for v, w := range want.Periods {
		if !seen[v] {
			d.periods++
			d.add("presence %s: missing, want %s", v, describePeriod(w))
		}
	}

	keys := make([]state.Key, 0, len(want.Timelines))
	wants := make([]room.Timeline, 0, len(want.Timelines))
	for k, tl := range want.Timelines {
		keys = append(keys, timelineKey(k.Room, k.Hour))
		wants = append(wants, tl)
	}
	got, err := readTimelines(ctx, st, keys)
	if err != nil {
		return nil, err
	}
	for i, g := range got {
		if !g.Found || !g.Val.Equal(wants[i]) {
			d.timelines++
			d.add("timeline %v: stored %s, want %s", keys[i], describeTimeline(g), describeTimeline(state.Entry[room.Timeline]{Val: wants[i], Found: true}))
		}
	}
	stored, err := st.TimelineKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing room hours: %w", err)
	}
	expected := make(map[string]bool, len(keys))
	for _, k := range keys {
		expected[k.Encoded()] = true
	}
	for _, k := range stored {
		if !expected[k.Encoded()] {
			d.extra++
			d.add("timeline %v: stored, but no event falls in that room hour", k)
		}
	}
	return d, nil
}

func describePeriod(p room.Period) string {
	ts := func(t time.Time) string {
		if t.IsZero() {
			return "?"
		}
		return t.Format(time.DateTime)
	}
	return fmt.Sprintf("{%s in %s from %s to %s}", p.Person, p.Room, ts(p.Start), ts(p.End))
}

func describeTimeline(e state.Entry[room.Timeline]) string {
	if !e.Found {
		return "nothing"
	}
	return fmt.Sprintf("{%d visits, %d entries, peak %d, %d person-minutes}", len(e.Val.Visits), e.Val.Entries, e.Val.Peak(), e.Val.PersonMinutes())
}
