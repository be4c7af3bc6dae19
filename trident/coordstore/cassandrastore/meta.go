package cassandrastore

import (
	"context"
	"errors"
	"fmt"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// GetMeta implements coordstore.Store. It reads at the session's
// consistency level.
func (st *Store) GetMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) ([]byte, bool, error) {
	if err := k.Validate(); err != nil {
		return nil, false, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer end()
	var v []byte
	err = st.s.Statement(ctx, st.getStmt, st.keyArgs(k, txCol(txid))...).Scan(&v)
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

// PrevMeta implements coordstore.Store: one read of the owner's
// partition, the clustering restricted by equality on stream and
// partition and by range on the txid.
func (st *Store) PrevMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) (coordstore.Entry, bool, error) {
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
	err = st.s.Statement(ctx, st.prevStmt, st.keyArgs(k, txCol(txid))...).Scan(&c, &v)
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

// PutMeta implements coordstore.Store: a lightweight transaction that
// writes the entry if gen is the owner's generation.
func (st *Store) PutMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID, value []byte) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if err := coordstore.ValidateTxID(txid); err != nil {
		return err
	}
	if value == nil {
		value = []byte{} // an empty blob, not null
	}
	args := append([]any{value}, st.keyArgs(k, txCol(txid), int64(gen))...)
	return st.fencedWrite(ctx, gen, k, st.putStmt, args, fmt.Sprintf("put meta of %s txid %d", k, txid))
}

// RemoveMeta implements coordstore.Store: a conditional deletion of the
// entry's row.
func (st *Store) RemoveMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return st.fencedWrite(ctx, gen, k, st.rmStmt, st.keyArgs(k, txCol(txid), int64(gen)),
		fmt.Sprintf("remove meta of %s txid %d", k, txid))
}

// CleanupMetaBefore implements coordstore.Store: a conditional batch of a
// write of the owner's generation (the condition) and one range deletion.
func (st *Store) CleanupMetaBefore(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	if err := k.Validate(); err != nil {
		return err
	}
	args := append([]any{int64(gen), st.ns, []byte(k.Owner), int64(gen)}, st.keyArgs(k, txCol(txid))...)
	return st.fencedWrite(ctx, gen, k, st.cleanStmt, args, fmt.Sprintf("cleanup meta of %s before txid %d", k, txid))
}

// keyArgs returns the arguments naming k's rows (namespace, owner, stream,
// partition), then more.
func (st *Store) keyArgs(k coordstore.Key, more ...any) []any {
	return append([]any{st.ns, []byte(k.Owner), []byte(k.Stream), []byte(k.Partition)}, more...)
}

// fencedWrite runs a lightweight transaction conditioned on the owner's
// generation being gen. Not applied, it returns the ErrFenced error. Each
// of these writes is idempotent (the same entry, the same deletion), so
// one whose outcome is unknown is simply tried again, up to writeAttempts
// times in all; should a newer generation have come in between, the retry
// is fenced, which the superseded caller must hear anyway.
func (st *Store) fencedWrite(ctx context.Context, gen coordstore.Generation, k coordstore.Key, stmt string, args []any, op string) error {
	f := k.Fence(gen)
	if err := coordstore.ValidateFence(f); err != nil {
		return err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	for try := 1; ; try++ {
		row := map[string]any{}
		applied, err := st.s.CAS(ctx, stmt, args...).MapScanCAS(row)
		switch {
		case err == nil && applied:
			return nil
		case err == nil:
			return coordstore.Fenced("meta of "+k.String(), f, casGen(row))
		case try == writeAttempts || !again(ctx, err):
			return fail(op, err)
		}
	}
}
