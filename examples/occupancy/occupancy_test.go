package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/boltwindows"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// expected computes the windows straight from the events: every window
// (aligned to the slide) that ends by the watermark, the largest event
// time minus the allowed lateness. (Nothing is late: the generator writes
// events in time order.)
func expected(events []room.Event) []Occupancy {
	type acc struct {
		people         map[string]bool
		enters, leaves int64
	}
	accs := map[string]*acc{}
	var last time.Time
	for _, e := range events {
		last = maxTime(last, e.Time)
	}
	watermark := last.Add(-Lateness)
	var out []Occupancy
	seen := map[string]bool{}
	for _, e := range events {
		ts := e.Time.UTC()
		for start := ts.Truncate(Slide).Add(-Length + Slide); !start.After(ts); start = start.Add(Slide) {
			end := start.Add(Length)
			if end.After(watermark) {
				continue
			}
			id := e.Room + start.String()
			a := accs[id]
			if a == nil {
				a = &acc{people: map[string]bool{}}
				accs[id] = a
			}
			a.people[e.Person] = true
			if e.Kind == room.Enter {
				a.enters++
			} else {
				a.leaves++
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, Occupancy{Room: e.Room, Start: start, End: end})
			}
		}
	}
	res := &Results{}
	for _, o := range out {
		a := accs[o.Room+o.Start.String()]
		o.People, o.Enters, o.Leaves = int64(len(a.people)), a.enters, a.leaves
		res.add(o)
	}
	return res.All()
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// TestOccupancy runs the example in one task, whose watermark is that of
// all the events, and compares its windows with the expected ones; then
// in two tasks, where each task has the watermark of its own rooms: it
// fires a subset of those windows that holds every window ending by the
// earliest watermark a task can have.
func TestOccupancy(t *testing.T) {
	for _, tc := range []struct {
		store       string
		parallelism int
	}{{"memory", 1}, {"bbolt", 1}, {"memory", 2}} {
		store := tc.store
		t.Run(fmt.Sprint(store, "/", tc.parallelism), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "windows.db")
			synctest.Test(t, func(t *testing.T) {
				batches, events, err := Events(room.GenConfig{People: 30, Rooms: 4, VisitsPerPerson: 4, Seed: 7, NightShift: -1}, 25)
				if err != nil {
					t.Fatal(err)
				}
				st := windowstore.Store(windowstore.NewMemory())
				if store == "bbolt" {
					bs, err := boltwindows.Open(path, boltwindows.Options{})
					if err != nil {
						t.Fatal(err)
					}
					defer bs.Close()
					st = bs
				}
				got, err := Run(t.Context(), batches, st, tc.parallelism, trident.Config{BatchEmitInterval: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				want := expected(events)
				if len(want) < 100 {
					t.Fatalf("only %d windows expected: a poor test", len(want))
				}
				if tc.parallelism > 1 {
					checkSubset(t, got, want, events)
					return
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("got %d windows, want %d\n got %v\nwant %v", len(got), len(want), got, want)
				}
			})
		})
	}
}

// checkSubset checks that got is a subset of want holding every window
// that ends by the earliest of the rooms' watermarks.
func checkSubset(t *testing.T, got, want []Occupancy, events []room.Event) {
	t.Helper()
	last := map[string]time.Time{}
	for _, e := range events {
		last[e.Room] = maxTime(last[e.Room], e.Time)
	}
	var earliest time.Time
	for _, ts := range last {
		if earliest.IsZero() || ts.Before(earliest) {
			earliest = ts
		}
	}
	earliest = earliest.Add(-Lateness)
	byID := map[string]Occupancy{}
	for _, o := range want {
		byID[o.Room+o.Start.String()] = o
	}
	found := map[string]bool{}
	for _, o := range got {
		id := o.Room + o.Start.String()
		if w, ok := byID[id]; !ok || w != o {
			t.Fatalf("window %v not expected (want %v)", o, w)
		}
		found[id] = true
	}
	n := 0
	for id, o := range byID {
		if !o.End.After(earliest) {
			n++
			if !found[id] {
				t.Fatalf("window %v did not fire", o)
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d windows end by %v: a poor test", n, earliest)
	}
}
