package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/internal/clock"
)

// chunk is how many records the feed writes at a time.
const chunk = 500

// firstDay is the day of the first generated day of events.
var firstDay = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// days generates room presence's events without end: a generated day
// (room.Generator) after another, each with its own seed, its visits
// and event ids prefixed with the day's number so that no two days share
// a visit.
type days struct {
	people, rooms int
	seed          uint64
	day           int
	gen           *room.Generator
}

// next returns the next record.
func (d *days) next() (kafkago.Message, error) {
	for {
		if d.gen == nil {
			g, err := room.NewGenerator(room.GenConfig{People: d.people, Rooms: d.rooms, VisitsPerPerson: 10,
				Day: firstDay.AddDate(0, 0, d.day), Seed: d.seed + uint64(d.day), OutOfOrder: 0.05, Malformed: 0.001})
			if err != nil {
				return kafkago.Message{}, err
			}
			d.gen = g
		}
		r, ok := d.gen.Next()
		if !ok {
			d.gen = nil
			d.day++
			continue
		}
		if r.Malformed {
			return kafkago.Message{Key: r.Key, Value: r.Value}, nil
		}
		e, err := room.Decode(r.Value)
		if err != nil {
			return kafkago.Message{}, fmt.Errorf("soak: a generated event does not decode: %w", err)
		}
		prefix := fmt.Sprintf("d%05d-", d.day)
		e.Visit, e.ID = prefix+e.Visit, prefix+e.ID
		return kafkago.Message{Key: []byte(e.Visit), Value: e.Encode()}, nil
	}
}

// feed writes days of events to the events topic at a bounded rate, or
// as fast as the topology reads them.
type feed struct {
	w      *kafkago.Writer
	days   *days
	rate   int                  // records a second; 0: paced by lag
	maxLag int64                // with rate 0: most records ahead
	lag    func() (int64, bool) // the topology's lag, and whether known
	fed    atomic.Int64         // records written
	next   time.Time            // with rate > 0: when the next chunk is due
}

// run writes records until it has written until in all (until < 0: no
// end) or ctx ends; it returns nil when ctx ends.
func (f *feed) run(ctx context.Context, until int64) error {
	batch := make([]kafkago.Message, 0, chunk)
	for until < 0 || f.fed.Load() < until {
		if err := f.pace(ctx); err != nil {
			return nil
		}
		n := int64(chunk)
		if until >= 0 {
			n = min(n, until-f.fed.Load())
		}
		batch = batch[:0]
		for range n {
			m, err := f.days.next()
			if err != nil {
				return err
			}
			batch = append(batch, m)
		}
		if err := f.w.WriteMessages(ctx, batch...); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("soak: writing events: %w", err)
		}
		f.fed.Add(n)
	}
	return nil
}

// pace waits until the next chunk may be written: at the rate, without
// catching up more than a second after a pause; or, with rate 0, until
// the topology is less than maxLag behind.
func (f *feed) pace(ctx context.Context) error {
	if f.rate > 0 {
		now := time.Now()
		if f.next.Before(now.Add(-time.Second)) {
			f.next = now
		}
		if err := clock.Sleep(ctx, clock.Real(), f.next.Sub(now)); err != nil {
			return err
		}
		f.next = f.next.Add(time.Duration(chunk) * time.Second / time.Duration(f.rate))
		return nil
	}
	for {
		if lag, ok := f.lag(); !ok || lag < f.maxLag {
			return ctx.Err()
		}
		if err := clock.Sleep(ctx, clock.Real(), 100*time.Millisecond); err != nil {
			return err
		}
	}
}
