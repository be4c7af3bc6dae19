package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/cassandrastore"
)

// cassandraStore keeps the presence table, the room_timelines opaque map
// and the coordination store in one Cassandra keyspace.
type cassandraStore struct {
	s         *cassandra.Session
	keyspace  string
	timelines *cassandra.Table
	coord     *cassandrastore.Store
	reads     int // presence reads in flight per upsert
}

const presenceTable = `CREATE TABLE IF NOT EXISTS %s.presence (
	visit text PRIMARY KEY, room text, person text, start_at timestamp, end_at timestamp)`

// timelineSpec is the room_timelines table: one partition per room and
// hour (Unix seconds), opaque values (txid, curr, prev) as msgpack blobs.
var timelineSpec = cassandra.TableSpec{
	Name: timelineMap, Layout: cassandra.Opaque,
	Keys: []cassandra.Column{{Name: "room", Type: "text"}, {Name: "hour", Type: "bigint"}},
}

func openCassandra(ctx context.Context, hosts []string, keyspace string, replication int) (*cassandraStore, error) {
	s, err := cassandra.Connect(ctx, cassandra.Config{Hosts: hosts, Keyspace: keyspace})
	if err != nil {
		return nil, err
	}
	st := &cassandraStore{s: s, keyspace: keyspace, reads: 64}
	err = s.EnsureKeyspace(ctx, cassandra.SimpleReplication(replication))
	if err == nil {
		err = s.CreateTable(ctx, "presence", fmt.Sprintf(presenceTable, keyspace))
	}
	if err == nil {
		st.timelines, err = s.EnsureTable(ctx, timelineSpec)
	}
	if err == nil {
		st.coord, err = cassandrastore.Open(ctx, s, cassandrastore.Options{Namespace: "roompresence"})
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("preparing keyspace %s: %w", keyspace, err)
	}
	return st, nil
}

// Upsert writes each event's half of its row (an UPDATE sets only the
// columns it names, so the two halves meet whatever their order), then
// reads the touched rows back.
func (c *cassandraStore) Upsert(ctx context.Context, events []room.Event) ([]room.Period, error) {
	err := c.each(ctx, len(events), func(ctx context.Context, i int) error {
		e := events[i]
		col := "start_at"
		if e.Kind == room.Leave {
			col = "end_at"
		}
		return c.s.Query(ctx, "UPDATE "+c.keyspace+".presence SET room = ?, person = ?, "+col+" = ? WHERE visit = ?", e.Room, e.Person, e.Time, e.Visit)
	})
	if err != nil {
		return nil, err
	}
	var visits []string
	seen := map[string]bool{}
	for _, e := range events {
		if !seen[e.Visit] {
			seen[e.Visit] = true
			visits = append(visits, e.Visit)
		}
	}
	rows := make([]room.Period, len(visits))
	err = c.each(ctx, len(visits), func(ctx context.Context, i int) error {
		p, err := c.get(ctx, visits[i])
		rows[i] = p
		return err
	})
	return rows, err
}

func (c *cassandraStore) get(ctx context.Context, visit string) (room.Period, error) {
	p := room.Period{Visit: visit}
	var start, end time.Time
	err := c.s.Statement(ctx, "SELECT room, person, start_at, end_at FROM "+c.keyspace+".presence WHERE visit = ?", visit).
		Scan(&p.Room, &p.Person, &start, &end)
	if err != nil {
		return p, cassandra.Classify(fmt.Errorf("reading presence row %s: %w", visit, err))
	}
	p.Start, p.End = utcOrZero(start), utcOrZero(end)
	return p, nil
}

func utcOrZero(t time.Time) time.Time {
	if t.IsZero() || t.Unix() == 0 {
		return time.Time{}
	}
	return t.UTC()
}

// each runs fn(0..n-1) with at most c.reads calls at once and returns the
// first error.
func (c *cassandraStore) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, c.reads)
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
					cancel()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

func (c *cassandraStore) Timelines() trident.BackingFactory { return c.timelines.Backing }

func (c *cassandraStore) Coordination() coordstore.Store { return c.coord }

func (c *cassandraStore) ScanPresence(ctx context.Context, fn func(room.Period) error) error {
	it := c.s.Statement(ctx, "SELECT visit, room, person, start_at, end_at FROM "+c.keyspace+".presence").PageSize(5000).Iter()
	var p room.Period
	var start, end time.Time
	for it.Scan(&p.Visit, &p.Room, &p.Person, &start, &end) {
		p.Start, p.End = utcOrZero(start), utcOrZero(end)
		if err := fn(p); err != nil {
			_ = it.Close()
			return err
		}
	}
	return cassandra.Classify(it.Close())
}

func (c *cassandraStore) TimelineKeys(ctx context.Context) ([]state.Key, error) {
	it := c.s.Statement(ctx, "SELECT room, hour FROM "+c.keyspace+"."+timelineMap).PageSize(5000).Iter()
	var keys []state.Key
	var roomID string
	var hour int64
	for it.Scan(&roomID, &hour) {
		keys = append(keys, state.MustKey(roomID, hour))
	}
	return keys, cassandra.Classify(it.Close())
}

func (c *cassandraStore) Close() error {
	return errors.Join(c.coord.Close(), c.s.Close())
}
