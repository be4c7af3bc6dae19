package cassandrastore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/trident/coordstore"
)

// DefaultTable names the store's table.
const DefaultTable = "squall_coordination"

// Options configures Open. The zero value is valid.
type Options struct {
	// Namespace separates independent users of one keyspace. Empty is a
	// namespace like any other.
	Namespace string
	// Table names the table. Empty means DefaultTable.
	Table string
}

// attempts bounds the tries of one Acquire: compare-and-sets that lose to
// a concurrent Acquire (tried again from the generation it returned) or
// end with an unknown outcome (tried again from a serial read).
const attempts = 32

// writeAttempts bounds the tries of a metadata write whose outcome stays
// unknown.
const writeAttempts = 4

// Store is a coordstore.Store in Cassandra. It is safe for concurrent use.
type Store struct {
	s  *cassandra.Session
	ns []byte

	loadStmt, insertStmt, acquireStmt, swapStmt   string
	getStmt, prevStmt, putStmt, rmStmt, cleanStmt string

	mu     sync.RWMutex // write-locked by Close; read-locked by every call
	closed bool
}

var _ coordstore.Store = (*Store)(nil)

// Open returns a store over the session, creating its table if it does
// not exist. The session stays the caller's: close it after the store.
func Open(ctx context.Context, s *cassandra.Session, opts Options) (*Store, error) {
	name := opts.Table
	if name == "" {
		name = DefaultTable
	}
	t := s.Keyspace() + "." + name
	if err := s.CreateTable(ctx, name, `CREATE TABLE IF NOT EXISTS `+t+` (
		namespace blob, owner blob,
		gen bigint static, version bigint static, record blob static,
		stream blob, partition blob, txid bigint, value blob,
		PRIMARY KEY ((namespace, owner), stream, partition, txid))`); err != nil {
		return nil, err
	}
	owner := ` WHERE namespace = ? AND owner = ?`
	seq := owner + ` AND stream = ? AND partition = ?`
	row := seq + ` AND txid = ?`
	return &Store{
		s:           s,
		ns:          []byte(opts.Namespace),
		loadStmt:    `SELECT gen, version, record FROM ` + t + owner + ` LIMIT 1`,
		insertStmt:  `INSERT INTO ` + t + ` (namespace, owner, gen, version) VALUES (?, ?, 1, 0) IF NOT EXISTS`,
		acquireStmt: `UPDATE ` + t + ` SET gen = ?` + owner + ` IF gen = ?`,
		swapStmt:    `UPDATE ` + t + ` SET version = ?, record = ?` + owner + ` IF gen = ? AND version = ?`,
		getStmt:     `SELECT value FROM ` + t + row,
		prevStmt:    `SELECT txid, value FROM ` + t + seq + ` AND txid < ? ORDER BY stream DESC, partition DESC, txid DESC LIMIT 1`,
		putStmt:     `UPDATE ` + t + ` SET value = ?` + row + ` IF gen = ?`,
		rmStmt:      `DELETE FROM ` + t + row + ` IF gen = ?`,
		// A range deletion takes no condition of its own, but a batch's
		// condition guards all its statements: the first rewrites gen
		// unchanged only to carry it.
		cleanStmt: `BEGIN BATCH UPDATE ` + t + ` SET gen = ?` + owner + ` IF gen = ?; ` +
			`DELETE FROM ` + t + seq + ` AND txid < ?; APPLY BATCH`,
	}, nil
}

// Close implements coordstore.Store. It waits for calls in progress and
// leaves the session open.
func (st *Store) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	return nil
}

// begin checks ctx and that the store is open; end must be called after.
func (st *Store) begin(ctx context.Context) (end func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st.mu.RLock()
	if st.closed {
		st.mu.RUnlock()
		return nil, coordstore.ErrClosed
	}
	return st.mu.RUnlock, nil
}

// fail classifies an error of a statement: a context error is returned as
// it is, the rest through cassandra.Classify.
func fail(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return cassandra.Classify(fmt.Errorf("cassandrastore: %s: %w", op, err))
}

// again reports whether a lightweight transaction that failed with err
// may be tried again: its outcome is unknown or it was not applied for a
// reason that passes (a timeout, an unavailable replica), and ctx is live.
func again(ctx context.Context, err error) bool {
	return ctx.Err() == nil && cassandra.Retryable(err) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// owner is the static row of an owner: its newest generation and its
// coordinator record.
type owner struct {
	gen     coordstore.Generation
	version int64
	record  []byte
}

// readOwner reads the static row of name at the serial consistency level,
// which completes any lightweight transaction in progress on it first.
// A missing row is the zero owner.
func (st *Store) readOwner(ctx context.Context, name string) (owner, error) {
	var (
		gen, v int64
		raw    []byte
	)
	err := st.s.SerialRead(ctx, st.loadStmt, st.ns, []byte(name)).Scan(&gen, &v, &raw)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return owner{}, nil
	case err != nil:
		return owner{}, err
	case gen < 0:
		return owner{}, &coordstore.CorruptError{Where: fmt.Sprintf("owner %q", name), Err: fmt.Errorf("generation %d", gen)}
	}
	return owner{gen: coordstore.Generation(gen), version: v, record: raw}, nil
}

// casGen returns the generation in the row a lightweight transaction that
// was not applied returned (0 when the owner has no row).
func casGen(row map[string]any) coordstore.Generation {
	g, _ := row["gen"].(int64)
	return coordstore.Generation(max(g, 0))
}
