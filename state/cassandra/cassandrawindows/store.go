// Package cassandrawindows is a windowstore.Store in Cassandra: the
// records of Trident windows (see trident.Window) in a table of the
// session's keyspace, one partition per window task and one row per
// txid. A Put writes the record and deletes the older rows in one
// single-partition batch, which Cassandra applies atomically and in
// isolation. Reads and writes are at the session's consistency.
//
// Writes are not fenced by the topology's owner generation (the map
// states of package cassandra are): two processes running one topology
// over the same table at once could both write a window's record.
package cassandrawindows

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocql/gocql"

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
	s                          *cassandra.Session
	ns                         string
	getStmt, lastStmt, putStmt string
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
		id text, txid bigint, record blob,
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
	if err := st.s.Query(ctx, st.putStmt, key, txCol(txid), record, key, txCol(prune)); err != nil {
		return fail(fmt.Sprintf("put %s txid %d", id, txid), err)
	}
	return nil
}
