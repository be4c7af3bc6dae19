package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/cassandrastore"
	"golang.org/x/sync/errgroup"
)

// cassandraStore keeps the presence table, the room_timelines opaque map
// and the coordination store in one Cassandra keyspace.
type cassandraStore struct {
	s         *cassandra.Session
	keyspace  string
	version   int    // of the result tables
	presence  string // the presence table: keyspace.presence[_vN]
	timelines *cassandra.Table
	coord     *cassandrastore.Store
	reads     int // presence statements in flight per upsert
	halves    *writtenHalves
	counter   *statementCounter // of the statements the session sends
}

// presenceCacheSize bounds the open visits whose written half the store
// remembers (writtenHalves): more than the visits open at once in the
// generated data (at most one per person).
const presenceCacheSize = 200_000

const presenceTable = `CREATE TABLE IF NOT EXISTS %s (
	visit text PRIMARY KEY, room text, person text, start_at timestamp, end_at timestamp)`

// timelineSpec is the room_timelines table: one partition per room and
// hour (Unix seconds), opaque values (txid, curr, prev) as msgpack blobs.
var timelineSpec = cassandra.TableSpec{
	Name: timelineMap, Layout: cassandra.Opaque,
	Keys: []cassandra.Column{{Name: "room", Type: "text"}, {Name: "hour", Type: "bigint"}},
}

// openRetryFor bounds how long opening the store waits through an outage
// (Cassandra restarting, schema agreement not reached) before giving up.
const openRetryFor = 2 * time.Minute

// openCassandra connects and prepares the keyspace, retrying through
// outages for up to openRetryFor: a process started while Cassandra
// restarts waits for it instead of exiting.
func openCassandra(ctx context.Context, cfg cassandra.Config, replication, version int) (*cassandraStore, error) {
	counter := newStatementCounter()
	cfg.QueryObserver, cfg.BatchObserver = counter, counter
	waits := backoff.Sequence{Backoff: backoff.Exponential(int64(200*time.Millisecond), int64(5*time.Second))}
	giveUp := time.Now().Add(openRetryFor)
	for {
		st, err := tryOpenCassandra(ctx, cfg, replication, version, counter)
		if err == nil || !failure.IsUnavailable(err) || time.Now().After(giveUp) {
			return st, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Duration(waits.Next())):
		}
	}
}

func tryOpenCassandra(ctx context.Context, cfg cassandra.Config, replication, version int, counter *statementCounter) (*cassandraStore, error) {
	keyspace := cfg.Keyspace
	s, err := cassandra.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	st := &cassandraStore{s: s, keyspace: keyspace, reads: 64, version: version,
		halves: newWrittenHalves(presenceCacheSize), counter: counter}
	err = s.EnsureKeyspace(ctx, cassandra.SimpleReplication(replication))
	if err == nil && st.version == 0 {
		st.version, err = currentVersion(ctx, s)
	}
	if err == nil {
		st.presence = keyspace + "." + cassandra.VersionedName("presence", st.version)
		err = s.CreateTable(ctx, cassandra.VersionedName("presence", st.version), fmt.Sprintf(presenceTable, st.presence))
	}
	if err == nil {
		spec := timelineSpec
		spec.Name = cassandra.VersionedName(timelineMap, st.version)
		st.timelines, err = s.EnsureTable(ctx, spec)
	}
	if err == nil {
		st.coord, err = cassandrastore.Open(ctx, s, cassandrastore.Options{Namespace: cassandra.VersionedName(topologyName, st.version)})
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("preparing keyspace %s: %w", keyspace, err)
	}
	return st, nil
}

// Upsert writes each visit's half (or both halves) of its row, one UPDATE
// per visit: an UPDATE sets only the columns it names, so the halves meet
// whatever their order. A visit is complete as written when both halves
// are in events, or when this process wrote the other half before (see
// writtenHalves); only the other visits' rows are read back.
func (c *cassandraStore) Upsert(ctx context.Context, events []room.Event) ([]room.Period, error) {
	var visits []string
	halves := map[string]room.Period{}
	for _, e := range events {
		p, ok := halves[e.Visit]
		if !ok {
			visits = append(visits, e.Visit)
		}
		halves[e.Visit] = p.With(e)
	}
	rows := make([]room.Period, len(visits))
	complete := make([]bool, len(visits))
	err := c.each(ctx, len(visits), func(ctx context.Context, i int) error {
		p := halves[visits[i]]
		set, args := "room = ?, person = ?", []any{p.Room, p.Person}
		if !p.Start.IsZero() {
			set, args = set+", start_at = ?", append(args, p.Start)
		}
		if !p.End.IsZero() {
			set, args = set+", end_at = ?", append(args, p.End)
		}
		if err := c.s.Query(ctx, "UPDATE "+c.presence+" SET "+set+" WHERE visit = ?", append(args, p.Visit)...); err != nil {
			return err
		}
		rows[i], complete[i] = c.halves.written(p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = c.each(ctx, len(visits), func(ctx context.Context, i int) error {
		if complete[i] {
			return nil
		}
		var err error
		rows[i], err = c.get(ctx, visits[i])
		return err
	})
	return rows, err
}

func (c *cassandraStore) get(ctx context.Context, visit string) (room.Period, error) {
	p := room.Period{Visit: visit}
	var start, end time.Time
	err := c.s.Statement(ctx, "SELECT room, person, start_at, end_at FROM "+c.presence+" WHERE visit = ?", visit).
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
// first error; the first error cancels the calls' context.
func (c *cassandraStore) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.reads)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

func (c *cassandraStore) Timelines() trident.BackingFactory { return c.timelines.Backing }

func (c *cassandraStore) Coordination() coordstore.Store { return c.coord }

func (c *cassandraStore) ScanPresence(ctx context.Context, fn func(room.Period) error) error {
	it := c.s.Statement(ctx, "SELECT visit, room, person, start_at, end_at FROM "+c.presence).PageSize(5000).Iter()
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
	it := c.s.Statement(ctx, "SELECT room, hour FROM "+c.keyspace+"."+cassandra.VersionedName(timelineMap, c.version)).PageSize(5000).Iter()
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

// Statements returns the counts of the statements sent so far.
func (c *cassandraStore) Statements() statementCounts { return c.counter.Counts() }

// Version is the version of the store's result tables.
func (c *cassandraStore) Version() int { return c.version }

// currentVersion is the version of the result tables readers use.
func currentVersion(ctx context.Context, s *cassandra.Session) (int, error) {
	v, err := cassandra.OpenVersions(ctx, s)
	if err != nil {
		return 0, err
	}
	return v.Current(ctx, topologyName)
}
