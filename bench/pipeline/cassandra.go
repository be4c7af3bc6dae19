package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocql/gocql"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/sync/errgroup"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state/cassandra"
)

// The tables room presence writes (examples/roompresence/store_cassandra.go),
// the same schema.
const (
	presenceDDL = `CREATE TABLE IF NOT EXISTS %s.presence (
	visit text PRIMARY KEY, room text, person text, start_at timestamp, end_at timestamp)`
	timelineDDL = `CREATE TABLE IF NOT EXISTS %s.room_timelines (
	room text, hour bigint, txid bigint, curr blob, prev blob, PRIMARY KEY ((room, hour)))`
	// rememberedVisits is the presence store's LRU of written halves.
	rememberedVisits = 200_000
)

// cassandraResult is what the raw writes measured.
type cassandraResult struct {
	events, statements int
	took               time.Duration // of the batches' statements only
}

// rawWriter issues room presence's statements for one batch after
// another.
type rawWriter struct {
	o          options
	s          *cassandra.Session
	statements atomic.Int64
	mu         sync.Mutex // guards halves
	halves     *simplelru.LRU[string, room.Period]
	timelines  map[timelineKey]*timelineRow // every room hour seen: read once
	txid       int64
}

type timelineKey struct {
	room string
	hour int64
}

type timelineRow struct {
	tl   room.Timeline
	curr []byte
}

// writeRaw creates the tables in o.keyspace and sends, batch after batch,
// the statements room presence sends for it, returns how long they took,
// and drops the keyspace.
func writeRaw(ctx context.Context, o options, batches [][][]byte) (cassandraResult, error) {
	s, err := cassandra.Connect(ctx, cassandra.Config{Hosts: o.hosts, Keyspace: o.keyspace})
	if err != nil {
		return cassandraResult{}, err
	}
	defer s.Close()
	if err := s.EnsureKeyspace(ctx, cassandra.SimpleReplication(1)); err != nil {
		return cassandraResult{}, err
	}
	if err := s.CreateTable(ctx, "presence", fmt.Sprintf(presenceDDL, o.keyspace)); err != nil {
		return cassandraResult{}, err
	}
	if err := s.CreateTable(ctx, "room_timelines", fmt.Sprintf(timelineDDL, o.keyspace)); err != nil {
		return cassandraResult{}, err
	}
	halves, err := simplelru.NewLRU[string, room.Period](rememberedVisits, nil)
	if err != nil {
		return cassandraResult{}, err
	}
	w := &rawWriter{o: o, s: s, halves: halves, timelines: map[timelineKey]*timelineRow{}}
	decoded := make([][]room.Event, len(batches)) // decoded before the clock starts
	var res cassandraResult
	for i, b := range batches {
		for _, v := range b {
			if e, err := room.Decode(v); err == nil {
				decoded[i] = append(decoded[i], e)
			}
		}
		res.events += len(decoded[i])
	}
	start := time.Now()
	for _, events := range decoded {
		if err := w.batch(ctx, events); err != nil {
			return res, err
		}
	}
	res.took = time.Since(start)
	res.statements = int(w.statements.Load())
	// The keyspace is scratch: dropped once measured.
	return res, s.DropKeyspace(ctx)
}

// batch sends one batch's statements: the presence upserts and
// read-backs, then the room hours' reads (first sight) and writes.
func (w *rawWriter) batch(ctx context.Context, events []room.Event) error {
	w.txid++
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
	per := w.o.presenceBatch
	err := w.each(ctx, (len(visits)+per-1)/per, func(ctx context.Context, b int) error {
		from, to := b*per, min((b+1)*per, len(visits))
		if err := w.upsert(ctx, halves, visits[from:to]); err != nil {
			return err
		}
		for i := from; i < to; i++ {
			rows[i], complete[i] = w.written(halves[visits[i]])
		}
		return nil
	})
	if err != nil {
		return err
	}
	var open []int
	for i, done := range complete {
		if !done {
			open = append(open, i)
		}
	}
	err = w.each(ctx, (len(open)+per-1)/per, func(ctx context.Context, b int) error {
		chunk := open[b*per : min((b+1)*per, len(open))]
		names := make([]string, len(chunk))
		for j, i := range chunk {
			names[j] = visits[i]
		}
		got, err := w.read(ctx, names)
		for j, i := range chunk {
			rows[i] = got[j]
		}
		return err
	})
	if err != nil {
		return err
	}
	return w.writeTimelines(ctx, events, rows)
}

// upsert writes the halves of visits: one UPDATE, or an unlogged batch.
func (w *rawWriter) upsert(ctx context.Context, halves map[string]room.Period, visits []string) error {
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
		entries[i] = gocql.BatchEntry{Stmt: "UPDATE " + w.o.keyspace + ".presence SET " + set + " WHERE visit = ?", Args: append(args, p.Visit)}
	}
	w.statements.Add(int64(len(entries)))
	if len(entries) == 1 {
		return w.s.Query(ctx, entries[0].Stmt, entries[0].Args...)
	}
	return w.s.UnloggedBatch(ctx, entries)
}

// written is the presence store's writtenHalves: p merged with the half
// remembered, and whether that makes the row complete.
func (w *rawWriter) written(p room.Period) (room.Period, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	known, _ := w.halves.Peek(p.Visit)
	if p.Start.IsZero() {
		p.Start = known.Start
	}
	if p.End.IsZero() {
		p.End = known.End
	}
	if p.Complete() {
		w.halves.Remove(p.Visit)
		return p, true
	}
	w.halves.Add(p.Visit, p)
	return p, false
}

// read reads the presence rows of visits back: one SELECT, or SELECT ... IN.
func (w *rawWriter) read(ctx context.Context, visits []string) ([]room.Period, error) {
	w.statements.Add(1) // a SELECT ... IN is one statement, as room presence counts it
	out := make([]room.Period, len(visits))
	at := make(map[string]int, len(visits))
	for i, v := range visits {
		out[i] = room.Period{Visit: v}
		at[v] = i
	}
	var q *gocql.Query
	if len(visits) == 1 {
		q = w.s.Statement(ctx, "SELECT visit, room, person, start_at, end_at FROM "+w.o.keyspace+".presence WHERE visit = ?", visits[0])
	} else {
		q = w.s.Statement(ctx, "SELECT visit, room, person, start_at, end_at FROM "+w.o.keyspace+".presence WHERE visit IN ?", visits)
	}
	it := q.Iter()
	var p room.Period
	var start, end time.Time
	for it.Scan(&p.Visit, &p.Room, &p.Person, &start, &end) {
		p.Start, p.End = orZero(start), orZero(end)
		if i, ok := at[p.Visit]; ok {
			out[i] = p
		}
	}
	return out, it.Close()
}

// orZero is t, or the zero time for a null column (which scans as the
// Unix epoch).
func orZero(t time.Time) time.Time {
	if t.IsZero() || t.Unix() == 0 {
		return time.Time{}
	}
	return t.UTC()
}

// writeTimelines merges the batch's pieces (every complete period's hours
// and an entry per ENTER) into their room hours, reads each room hour the
// first time it is seen, and writes each touched room hour once as an
// opaque value (txid, curr, prev).
func (w *rawWriter) writeTimelines(ctx context.Context, events []room.Event, rows []room.Period) error {
	var pieces []room.Piece
	for _, p := range rows {
		if p.Complete() {
			pieces = append(pieces, p.Pieces()...)
		}
	}
	for _, e := range events {
		if e.Kind == room.Enter {
			pieces = append(pieces, room.EntryPiece(e))
		}
	}
	touched := map[timelineKey]room.Timeline{}
	var keys []timelineKey
	for _, pc := range pieces {
		k := timelineKey{pc.Room, pc.Hour.Unix()}
		tl, ok := touched[k]
		if !ok {
			keys = append(keys, k)
		}
		touched[k] = tl.Merge(pc.Timeline)
	}
	var unseen []timelineKey
	for _, k := range keys {
		if _, ok := w.timelines[k]; !ok {
			unseen = append(unseen, k)
			w.timelines[k] = &timelineRow{}
		}
	}
	table := w.o.keyspace + ".room_timelines"
	err := w.each(ctx, len(unseen), func(ctx context.Context, i int) error {
		w.statements.Add(1)
		var txid int64
		var curr, prev []byte
		err := w.s.Statement(ctx, "SELECT txid, curr, prev FROM "+table+" WHERE room = ? AND hour = ?",
			unseen[i].room, unseen[i].hour).Scan(&txid, &curr, &prev)
		if err == gocql.ErrNotFound {
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	ts := time.Now().UnixMicro()
	return w.each(ctx, len(keys), func(ctx context.Context, i int) error {
		k := keys[i]
		row := w.timelines[k] // distinct keys: no two calls share a row
		prev := row.curr
		row.tl = row.tl.Merge(touched[k])
		curr, err := json.Marshal(row.tl)
		if err != nil {
			return err
		}
		row.curr = curr
		w.statements.Add(1)
		return w.s.Query(ctx, "INSERT INTO "+table+" (room, hour, txid, curr, prev) VALUES (?, ?, ?, ?, ?) USING TIMESTAMP ?",
			k.room, k.hour, w.txid, curr, prev, ts)
	})
}

// each runs fn(0..n-1) with at most o.concurrency calls at once.
func (w *rawWriter) each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(w.o.concurrency)
	for i := range n {
		g.Go(func() error { return fn(gctx, i) })
	}
	return g.Wait()
}
