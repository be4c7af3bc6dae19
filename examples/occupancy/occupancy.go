package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/txn"
)

// Window sizes: 15-minute windows every minute, with two minutes for
// events that arrive out of order.
const (
	Length   = 15 * time.Minute
	Slide    = time.Minute
	Lateness = 2 * time.Minute
)

// Occupancy is what one room's window holds: the people seen at its
// door (with an ENTER or a LEAVE in the window) and the events by kind.
type Occupancy struct {
	Room           string
	Start, End     time.Time
	People         int64
	Enters, Leaves int64
}

func (o Occupancy) String() string {
	return fmt.Sprintf("%s [%s, %s) people=%d enters=%d leaves=%d",
		o.Room, o.Start.Format("15:04"), o.End.Format("15:04"), o.People, o.Enters, o.Leaves)
}

// occupancyAgg counts a window's people and events.
type occupancyAgg struct{}

type occupancyAcc struct {
	people         map[string]bool
	enters, leaves int64
}

func (occupancyAgg) Init(txn.Attempt, trident.Collector) (*occupancyAcc, error) {
	return &occupancyAcc{people: map[string]bool{}}, nil
}

func (occupancyAgg) Aggregate(acc *occupancyAcc, t trident.Tuple, _ trident.Collector) (*occupancyAcc, error) {
	acc.people[t.String("person")] = true
	if room.Kind(t.String("kind")) == room.Enter {
		acc.enters++
	} else {
		acc.leaves++
	}
	return acc, nil
}

func (occupancyAgg) Complete(acc *occupancyAcc, out trident.Collector) error {
	out.Emit(int64(len(acc.people)), acc.enters, acc.leaves)
	return nil
}

// Results collects the fired windows. A replayed commit emits its windows
// again, with the same values, so keeping the last value per window is
// exactly once.
type Results struct {
	mu   sync.Mutex
	byID map[string]Occupancy
}

func (r *Results) add(o Occupancy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]Occupancy{}
	}
	r.byID[o.Room+o.Start.String()] = o
}

// All returns the windows by room and start.
func (r *Results) All() []Occupancy {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Occupancy, 0, len(r.byID))
	for _, o := range r.byID {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Room != out[j].Room {
			return out[i].Room < out[j].Room
		}
		return out[i].Start.Before(out[j].Start)
	})
	return out
}

// Build declares the topology: room events, grouped by room, in sliding
// event-time windows kept in store, into res.
func Build(name string, batches [][][]any, store trident.WindowsStore, parallelism int, res *Results) *trident.Topology {
	tt := trident.NewTopology(name)
	events := tt.NewStream("events", trident.FixedSource(trident.Fields{"room", "person", "kind", "ts"}, batches...))
	spec := trident.SlidingDuration(Length, Slide).EventTime("ts").AllowedLateness(Lateness).Name(name + "/occupancy")
	windows := trident.WindowGroups(events.GroupBy("room").Parallelism(parallelism), spec, store,
		trident.Fields{"person", "kind"}, trident.Aggregator[*occupancyAcc](occupancyAgg{}), "people", "enters", "leaves")
	windows.Peek(func(t trident.Tuple) {
		res.add(Occupancy{Room: t.String("room"), Start: t.Get(trident.WindowStart).(time.Time), End: t.Get(trident.WindowEnd).(time.Time),
			People: t.Get("people").(int64), Enters: t.Get("enters").(int64), Leaves: t.Get("leaves").(int64)})
	})
	return tt
}

// Events generates a day of room events and splits them into batches of
// size events, in the generator's (time) order.
func Events(cfg room.GenConfig, size int) ([][][]any, []room.Event, error) {
	g, err := room.NewGenerator(cfg)
	if err != nil {
		return nil, nil, err
	}
	var (
		batches [][][]any
		batch   [][]any
		all     []room.Event
	)
	for {
		rec, ok := g.Next()
		if !ok {
			break
		}
		e, err := room.Decode(rec.Value)
		if err != nil {
			continue // the generator's malformed records, if asked for
		}
		all = append(all, e)
		batch = append(batch, []any{e.Room, e.Person, string(e.Kind), e.Time.UTC()})
		if len(batch) == size {
			batches, batch = append(batches, batch), nil
		}
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	return batches, all, nil
}

// Run runs the topology over batches with cfg until every batch is
// committed, and returns the windows that fired in this run.
func Run(ctx context.Context, batches [][][]any, store trident.WindowsStore, parallelism int, cfg trident.Config) ([]Occupancy, error) {
	res := &Results{}
	tt := Build("occupancy", batches, store, parallelism, res)
	r, err := tt.Submit(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer r.Stop(context.Background())
	if err := r.WaitCommitted(ctx, txn.TxID(len(batches))); err != nil {
		return nil, err
	}
	return res.All(), nil
}
