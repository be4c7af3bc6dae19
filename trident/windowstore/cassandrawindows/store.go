// Package cassandrawindows is a windowstore.Store in Cassandra: the
// records of Trident windows (see trident.Window) in a table of the
// session's keyspace, one partition per window task and one row per
// txid. Reads and writes are at the session's consistency.
//
// Writes are fenced by the topology's owner generation (state.FenceOf
// the context, as the Trident runtime writes): each partition keeps, in
// a static column, the newest generation that wrote it, and a Put is a
// lightweight transaction that writes the record only if that is still
// its own generation (or an older one, which it replaces). A write of a
// superseded generation fails with a *state.FencedError, so two
// processes running one topology over the table never both write a
// window's record. Once the record is written, the older rows are
// deleted. A Put without a fence in its context (tools, tests) is
// written unconditionally.
package cassandrawindows

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/txn"
)

// DefaultTable names the store's table.
const DefaultTable = "squall_windows"

// Options configures Open. The zero value is valid.
type Options struct {
	// Table names the table. Empty means DefaultTable.
	Table string
	// Namespace separates independent users of one table; it prefixes
	// every window task id.
	Namespace string
}

// Store is a windowstore.Store in Cassandra. It is safe for concurrent
// use and leaves the session to its caller.
type Store struct {
	s                                           *cassandra.Session
	ns                                          string
	getStmt, lastStmt, putStmt                  string
	genStmt, fencedFirst, fencedNext, pruneStmt string
	removeStmt                                  string
}

var _ windowstore.Store = (*Store)(nil)

// Open returns a store over the session, creating its table if it does
// not exist.
func Open(ctx context.Context, s *cassandra.Session, opts Options) (*Store, error) {
	name := opts.Table
	if name == "" {
		name = DefaultTable
	}
	t := s.Keyspace() + "." + name
	if err := s.CreateTable(ctx, name, `CREATE TABLE IF NOT EXISTS `+t+` (
		id text, txid bigint, record blob, gen bigint static,
		PRIMARY KEY ((id), txid)) WITH CLUSTERING ORDER BY (txid DESC)`); err != nil {
		return nil, err
	}
	return &Store{
		s:        s,
		ns:       opts.Namespace,
		getStmt:  `SELECT record FROM ` + t + ` WHERE id = ? AND txid = ?`,
		lastStmt: `SELECT txid, record FROM ` + t + ` WHERE id = ? AND txid < ? LIMIT 1`,
		putStmt: `BEGIN UNLOGGED BATCH INSERT INTO ` + t + ` (id, txid, record) VALUES (?, ?, ?); ` +
			`DELETE FROM ` + t + ` WHERE id = ? AND txid < ?; APPLY BATCH`,
		genStmt: `SELECT gen FROM ` + t + ` WHERE id = ? LIMIT 1`,
		fencedFirst: `BEGIN BATCH INSERT INTO ` + t + ` (id, txid, record) VALUES (?, ?, ?); ` +
			`UPDATE ` + t + ` SET gen = ? WHERE id = ? IF gen = null; APPLY BATCH`,
		fencedNext: `BEGIN BATCH INSERT INTO ` + t + ` (id, txid, record) VALUES (?, ?, ?); ` +
			`UPDATE ` + t + ` SET gen = ? WHERE id = ? IF gen = ?; APPLY BATCH`,
		pruneStmt:  `DELETE FROM ` + t + ` WHERE id = ? AND txid < ?`,
		removeStmt: `DELETE FROM ` + t + ` WHERE id = ? AND txid >= 0`,
	}, nil
}

// txCol is a txid as the bigint column; txids beyond int64 saturate.
func txCol(t txn.TxID) int64 {
	if t > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(t)
}

func fail(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return cassandra.Classify(fmt.Errorf("cassandrawindows: %s: %w", op, err))
}

// Get implements windowstore.Store.
func (st *Store) Get(ctx context.Context, id string, txid txn.TxID) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rec []byte
	err := st.s.Statement(ctx, st.getStmt, st.ns+id, txCol(txid)).Scan(&rec)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return nil, windowstore.ErrNotFound
	case err != nil:
		return nil, fail(fmt.Sprintf("get %s txid %d", id, txid), err)
	}
	if rec == nil {
		rec = []byte{}
	}
	return rec, nil
}

// Last implements windowstore.Store.
func (st *Store) Last(ctx context.Context, id string, before txn.TxID) (txn.TxID, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	var (
		tx  int64
		rec []byte
	)
	err := st.s.Statement(ctx, st.lastStmt, st.ns+id, txCol(before)).Scan(&tx, &rec)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return 0, nil, windowstore.ErrNotFound
	case err != nil:
		return 0, nil, fail(fmt.Sprintf("last of %s before txid %d", id, before), err)
	}
	if rec == nil {
		rec = []byte{}
	}
	return txn.TxID(tx), rec, nil
}

// Put implements windowstore.Store: the record and the deletion of the
// older rows are one single-partition batch.
func (st *Store) Put(ctx context.Context, id string, txid txn.TxID, record []byte, prune txn.TxID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if record == nil {
		record = []byte{}
	}
	key := st.ns + id
	f, fenced := state.FenceOf(ctx)
	if !fenced {
		if err := st.s.Query(ctx, st.putStmt, key, txCol(txid), record, key, txCol(prune)); err != nil {
			return fail(fmt.Sprintf("put %s txid %d", id, txid), err)
		}
		return nil
	}
	if err := st.putFenced(ctx, key, f, txid, record); err != nil {
		return err
	}
	if err := st.s.Query(ctx, st.pruneStmt, key, txCol(prune)); err != nil {
		return fail(fmt.Sprintf("prune %s before txid %d", id, prune), err)
	}
	return nil
}

// Remove implements windowstore.Store: every record row of id is
// deleted; the id's generation stays, so a superseded writer is still
// refused.
func (st *Store) Remove(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := st.s.Query(ctx, st.removeStmt, st.ns+id); err != nil {
		return fail("remove "+id, err)
	}
	return nil
}

// putFenced writes the record if the partition's generation is f's or an
// older one, in one lightweight transaction that also sets it to f's.
func (st *Store) putFenced(ctx context.Context, key string, f state.Fence, txid txn.TxID, record []byte) error {
	gen := int64(f.Generation)
	var cur *int64
	if err := st.s.SerialRead(ctx, st.genStmt, key).Scan(&cur); err != nil && !errors.Is(err, gocql.ErrNotFound) {
		return fail(fmt.Sprintf("read the generation of %s", key), err)
	}
	for range 8 {
		if cur != nil && *cur > gen {
			return &state.FencedError{Where: "cassandrawindows: put " + key, Fence: f, Current: state.Generation(*cur)}
		}
		m := map[string]any{}
		var applied bool
		var err error
		if cur == nil {
			applied, err = st.s.CAS(ctx, st.fencedFirst, key, txCol(txid), record, gen, key).MapScanCAS(m)
		} else {
			applied, err = st.s.CAS(ctx, st.fencedNext, key, txCol(txid), record, gen, key, *cur).MapScanCAS(m)
		}
		if err != nil {
			return fail(fmt.Sprintf("put %s txid %d", key, txid), err)
		}
		if applied {
			return nil
		}
		// Another writer changed the generation meanwhile: compare again.
		cur = nil
		if g, ok := m["gen"].(int64); ok {
			cur = &g
		}
	}
	return fail(fmt.Sprintf("put %s txid %d", key, txid), errors.New("too much contention on the generation"))
}
