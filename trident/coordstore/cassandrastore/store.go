package cassandrastore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/trident/coordstore"
)

// Default table names.
const (
	DefaultCoordinatorTable = "squall_coordinator"
	DefaultMetaTable        = "squall_meta"
)

// Options configures Open. The zero value is valid.
type Options struct {
	// Namespace separates independent users of one keyspace. Empty is a
	// namespace like any other.
	Namespace string
	// CoordinatorTable and MetaTable name the tables. Empty means
	// DefaultCoordinatorTable and DefaultMetaTable.
	CoordinatorTable string
	MetaTable        string
}

// Store is a coordstore.Store in Cassandra. It is safe for concurrent use.
type Store struct {
	s  *cassandra.Session
	ns []byte

	loadStmt, insertStmt, updateStmt              string
	getStmt, prevStmt, putStmt, rmStmt, cleanStmt string

	clock clock

	mu     sync.RWMutex // write-locked by Close; read-locked by every call
	closed bool
}

var _ coordstore.Store = (*Store)(nil)

// Open returns a store over the session, creating its two tables if they
// do not exist. The session stays the caller's: close it after the store.
func Open(ctx context.Context, s *cassandra.Session, opts Options) (*Store, error) {
	coord, meta := opts.CoordinatorTable, opts.MetaTable
	if coord == "" {
		coord = DefaultCoordinatorTable
	}
	if meta == "" {
		meta = DefaultMetaTable
	}
	ks := s.Keyspace()
	if err := s.CreateTable(ctx, coord, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s.%s (namespace blob, stream blob, version bigint, record blob, PRIMARY KEY ((namespace, stream)))`, ks, coord)); err != nil {
		return nil, err
	}
	if err := s.CreateTable(ctx, meta, fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s.%s (namespace blob, stream blob, partition blob, txid bigint, value blob, PRIMARY KEY ((namespace, stream, partition), txid))`, ks, meta)); err != nil {
		return nil, err
	}
	c, m := ks+"."+coord, ks+"."+meta
	pk := `WHERE namespace = ? AND stream = ? AND partition = ?`
	return &Store{
		s:          s,
		ns:         []byte(opts.Namespace),
		loadStmt:   `SELECT version, record FROM ` + c + ` WHERE namespace = ? AND stream = ?`,
		insertStmt: `INSERT INTO ` + c + ` (namespace, stream, version, record) VALUES (?, ?, ?, ?) IF NOT EXISTS`,
		updateStmt: `UPDATE ` + c + ` SET version = ?, record = ? WHERE namespace = ? AND stream = ? IF version = ?`,
		getStmt:    `SELECT value FROM ` + m + ` ` + pk + ` AND txid = ?`,
		prevStmt:   `SELECT txid, value FROM ` + m + ` ` + pk + ` AND txid < ? ORDER BY txid DESC LIMIT 1`,
		putStmt:    `INSERT INTO ` + m + ` (namespace, stream, partition, txid, value) VALUES (?, ?, ?, ?, ?) USING TIMESTAMP ?`,
		rmStmt:     `DELETE FROM ` + m + ` USING TIMESTAMP ? ` + pk + ` AND txid = ?`,
		cleanStmt:  `DELETE FROM ` + m + ` USING TIMESTAMP ? ` + pk + ` AND txid < ?`,
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

// LoadCoordinator implements coordstore.Store. It reads at the serial
// consistency level.
func (st *Store) LoadCoordinator(ctx context.Context, stream string) (coordstore.Record, coordstore.Version, error) {
	if err := coordstore.ValidateStream(stream); err != nil {
		return coordstore.Record{}, 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return coordstore.Record{}, 0, err
	}
	defer end()
	return st.load(ctx, stream)
}

func (st *Store) load(ctx context.Context, stream string) (coordstore.Record, coordstore.Version, error) {
	var (
		v   int64
		raw []byte
	)
	err := st.s.SerialRead(ctx, st.loadStmt, st.ns, []byte(stream)).Scan(&v, &raw)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return coordstore.Record{}, 0, nil
	case err != nil:
		return coordstore.Record{}, 0, fail(fmt.Sprintf("load coordinator of stream %q", stream), err)
	}
	where := fmt.Sprintf("coordinator record of stream %q", stream)
	if v <= 0 {
		return coordstore.Record{}, 0, &coordstore.CorruptError{Where: where, Err: fmt.Errorf("version %d", v)}
	}
	r, err := decodeRecord(raw)
	if err != nil {
		return coordstore.Record{}, 0, &coordstore.CorruptError{Where: where, Err: err}
	}
	return r, coordstore.Version(v), nil
}

// SwapCoordinator implements coordstore.Store with a lightweight
// transaction. When its outcome is unknown (a timeout), a serial read
// decides: the record and version it wrote are there (success), another
// version is (conflict), or the old one still is (a retryable error).
func (st *Store) SwapCoordinator(ctx context.Context, stream string, old coordstore.Version, rec coordstore.Record) (coordstore.Version, error) {
	if err := coordstore.ValidateStream(stream); err != nil {
		return 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	next := old + 1
	raw := encodeRecord(rec)
	var q *gocql.Query
	if old == 0 {
		q = st.s.CAS(ctx, st.insertStmt, st.ns, []byte(stream), int64(next), raw)
	} else {
		q = st.s.CAS(ctx, st.updateStmt, int64(next), raw, st.ns, []byte(stream), int64(old))
	}
	cur := map[string]any{}
	applied, err := q.MapScanCAS(cur)
	if err != nil {
		return st.resolve(ctx, stream, old, next, raw, err)
	}
	if applied {
		return next, nil
	}
	have, _ := cur["version"].(int64)
	return 0, &coordstore.ConflictError{Stream: stream, Want: old, Have: coordstore.Version(have)}
}

// resolve settles a swap that failed with cause: its outcome may be
// unknown.
func (st *Store) resolve(ctx context.Context, stream string, old, next coordstore.Version, raw []byte, cause error) (coordstore.Version, error) {
	op := fmt.Sprintf("swap coordinator of stream %q from version %d", stream, old)
	if !cassandra.Retryable(cause) || ctx.Err() != nil {
		return 0, fail(op, cause)
	}
	var (
		v      int64
		stored []byte
	)
	err := st.s.SerialRead(ctx, st.loadStmt, st.ns, []byte(stream)).Scan(&v, &stored)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		v = 0
	case err != nil:
		return 0, fail(op+" (outcome unknown, and reading it back failed too: "+err.Error()+")", cause)
	}
	switch {
	case coordstore.Version(v) == next && string(stored) == string(raw):
		return next, nil
	case coordstore.Version(v) != old:
		return 0, &coordstore.ConflictError{Stream: stream, Want: old, Have: coordstore.Version(v)}
	}
	return 0, fail(op, cause) // not applied: the caller may try again
}

// GetMeta implements coordstore.Store.
func (st *Store) GetMeta(ctx context.Context, k coordstore.Key, txid state.TxID) ([]byte, bool, error) {
	if err := k.Validate(); err != nil {
		return nil, false, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer end()
	var v []byte
	err = st.s.Statement(ctx, st.getStmt, st.ns, []byte(k.Stream), []byte(k.Partition), txCol(txid)).Scan(&v)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, fail(fmt.Sprintf("get meta of %s txid %d", k, txid), err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// PrevMeta implements coordstore.Store.
func (st *Store) PrevMeta(ctx context.Context, k coordstore.Key, txid state.TxID) (coordstore.Entry, bool, error) {
	if err := k.Validate(); err != nil {
		return coordstore.Entry{}, false, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return coordstore.Entry{}, false, err
	}
	defer end()
	var (
		c int64
		v []byte
	)
	err = st.s.Statement(ctx, st.prevStmt, st.ns, []byte(k.Stream), []byte(k.Partition), txCol(txid)).Scan(&c, &v)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return coordstore.Entry{}, false, nil
	case err != nil:
		return coordstore.Entry{}, false, fail(fmt.Sprintf("prev meta of %s before txid %d", k, txid), err)
	}
	if v == nil {
		v = []byte{}
	}
	return coordstore.Entry{TxID: colTx(c), Value: v}, true, nil
}

// PutMeta implements coordstore.Store.
func (st *Store) PutMeta(ctx context.Context, k coordstore.Key, txid state.TxID, value []byte) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if err := coordstore.ValidateTxID(txid); err != nil {
		return err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	if value == nil {
		value = []byte{} // an empty blob, not null
	}
	err = st.s.Statement(ctx, st.putStmt, st.ns, []byte(k.Stream), []byte(k.Partition), txCol(txid), value, st.clock.next()).Exec()
	if err != nil {
		return fail(fmt.Sprintf("put meta of %s txid %d", k, txid), err)
	}
	return nil
}

// RemoveMeta implements coordstore.Store.
func (st *Store) RemoveMeta(ctx context.Context, k coordstore.Key, txid state.TxID) error {
	return st.deleteMeta(ctx, st.rmStmt, k, txid, "remove meta of %s txid %d")
}

// CleanupMetaBefore implements coordstore.Store with one range deletion.
func (st *Store) CleanupMetaBefore(ctx context.Context, k coordstore.Key, txid state.TxID) error {
	return st.deleteMeta(ctx, st.cleanStmt, k, txid, "cleanup meta of %s before txid %d")
}

// deleteMeta runs a deletion of k's metadata at txid (stmt: one entry or a
// range), described by what (with k and txid) in errors.
func (st *Store) deleteMeta(ctx context.Context, stmt string, k coordstore.Key, txid state.TxID, what string) error {
	if err := k.Validate(); err != nil {
		return err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	err = st.s.Statement(ctx, stmt, st.clock.next(), st.ns, []byte(k.Stream), []byte(k.Partition), txCol(txid)).Exec()
	if err != nil {
		return fail(fmt.Sprintf(what, k, txid), err)
	}
	return nil
}

// clock returns write timestamps in microseconds that never repeat or go
// back within one store.
type clock struct {
	mu   sync.Mutex
	last int64
}

func (c *clock) next() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = max(c.last+1, time.Now().UnixMicro())
	return c.last
}
