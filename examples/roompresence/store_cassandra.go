package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gocql/gocql"

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
	reads     int // presence requests in flight per upsert
	halves    *writtenHalves
	batch     int               // presence rows per request (unlogged batch, SELECT ... IN); 0 or 1: one statement each
	counter   *statementCounter // of the statements the session sends
}

// defaultPresenceBatch is run's --presence-batch: the presence rows
// written in one unlogged batch and read in one SELECT ... IN. On the
// one-node Cassandra of docs/PERFORMANCE.md it cuts the requests per
// event fifteenfold; on a cluster of several nodes the coordinator
// forwards each row to its replicas, and 1 (one routed statement per
// row) may be better.
const defaultPresenceBatch = 16

// maxPresenceBatch bounds --presence-batch.
const maxPresenceBatch = 64

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
// per visit (grouped c.batch to an unlogged batch): an UPDATE sets only
// the columns it names, so the halves meet whatever their order, and
// writing a batch again writes the same rows. A visit is complete as
// written when both halves are in events, or when this process wrote the
// other half before (see writtenHalves); only the other visits' rows are
// read back (c.batch to a SELECT ... IN), after every write succeeded.
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
	per := max(c.batch, 1)
	err := c.each(ctx, (len(visits)+per-1)/per, func(ctx context.Context, b int) error {
		from, to := b*per, min((b+1)*per, len(visits))
		if err := c.writeHalves(ctx, halves, visits[from:to]); err != nil {
			return err
		}
		for i := from; i < to; i++ {
			rows[i], complete[i] = c.halves.written(halves[visits[i]])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var open []int // indexes of the visits to read back
	for i, done := range complete {
		if !done {
			open = append(open, i)
		}
	}
	err = c.each(ctx, (len(open)+per-1)/per, func(ctx context.Context, b int) error {
		chunk := open[b*per : min((b+1)*per, len(open))]
		names := make([]string, len(chunk))
		for j, i := range chunk {
			names[j] = visits[i]
		}
		got, err := c.read(ctx, names)
		for j, i := range chunk {
			rows[i] = got[j]
		}
		return err
	})
	return rows, err
}

// writeHalves writes the halves of visits: one UPDATE, or an unlogged
// batch of them when there are several.
func (c *cassandraStore) writeHalves(ctx context.Context, halves map[string]room.Period, visits []string) error {
	entries := make([]gocql.BatchEntry, len(visits))
	for i, v := range visits {
		p := halves[v]
		set, args := "room = ?, person = ?", []any{p.Room, p.Person}
		if !p.Start.IsZero() {
			set, args = set+", start_at = ?", append(args, p.Start)
		}
		if !p.End.IsZero() {
			set, args = set+", end_at = ?", append(args, p.End)
		}
		entries[i] = gocql.BatchEntry{Stmt: "UPDATE " + c.presence + " SET " + set + " WHERE visit = ?", Args: append(args, p.Visit)}
	}
	if len(entries) == 1 {
		return c.s.Query(ctx, entries[0].Stmt, entries[0].Args...)
	}
	return c.s.UnloggedBatch(ctx, entries)
}

// read returns the stored rows of visits, in order: one SELECT for one
// visit, a SELECT ... IN for several.
func (c *cassandraStore) read(ctx context.Context, visits []string) ([]room.Period, error) {
	if len(visits) == 1 {
		p, err := c.get(ctx, visits[0])
		return []room.Period{p}, err
	}
	out := make([]room.Period, len(visits))
	at := make(map[string]int, len(visits))
	for i, v := range visits {
		out[i] = room.Period{Visit: v}
		at[v] = i
	}
	it := c.s.Statement(ctx, "SELECT visit, room, person, start_at, end_at FROM "+c.presence+" WHERE visit IN ?", visits).Iter()
	var p room.Period
	var start, end time.Time
	for it.Scan(&p.Visit, &p.Room, &p.Person, &start, &end) {
		p.Start, p.End = utcOrZero(start), utcOrZero(end)
		if i, ok := at[p.Visit]; ok {
			out[i] = p
		}
	}
	if err := it.Close(); err != nil {
		return out, cassandra.Classify(fmt.Errorf("reading %d presence rows: %w", len(visits), err))
	}
	return out, nil
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
