package etcdstore

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// GetMeta implements coordstore.Store: a linearizable read of the
// entry's key.
func (st *Store) GetMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) ([]byte, bool, error) {
	if err := k.Validate(); err != nil {
		return nil, false, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return nil, false, err
	}
	defer end()
	resp, err := st.get(ctx, st.metaKey(k, txid))
	if err != nil {
		return nil, false, st.fail(ctx, fmt.Sprintf("get meta of %s txid %d", k, txid), err)
	}
	kv := first(resp.Kvs)
	if kv == nil {
		return nil, false, nil
	}
	return value(kv.Value), true, nil
}

// PrevMeta implements coordstore.Store: a linearizable range read from
// the first key of k's entries up to (not including) the key of txid,
// sorted by key in descending order and limited to one key.
func (st *Store) PrevMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) (coordstore.Entry, bool, error) {
	if err := k.Validate(); err != nil {
		return coordstore.Entry{}, false, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return coordstore.Entry{}, false, err
	}
	defer end()
	dir := st.metaDir(k)
	resp, err := st.get(ctx, dir, clientv3.WithRange(st.metaKey(k, txid)),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(1))
	if err != nil {
		return coordstore.Entry{}, false, st.fail(ctx, fmt.Sprintf("prev meta of %s before txid %d", k, txid), err)
	}
	kv := first(resp.Kvs)
	if kv == nil {
		return coordstore.Entry{}, false, nil
	}
	t, ok := parseTxID(strings.TrimPrefix(string(kv.Key), dir))
	if !ok {
		return coordstore.Entry{}, false, &coordstore.CorruptError{Where: fmt.Sprintf("meta of %s", k),
			Err: fmt.Errorf("key %q names no txid", kv.Key)}
	}
	return coordstore.Entry{TxID: t, Value: value(kv.Value)}, true, nil
}

// value returns a stored value as the caller's own, never nil: an entry
// may hold an empty value.
func value(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b // the client decoded it into a buffer of its own
}

// PutMeta implements coordstore.Store: one transaction that puts the
// entry if the owner's generation key holds gen.
func (st *Store) PutMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID, value []byte) error {
	if err := k.Validate(); err != nil {
		return err
	}
	if err := coordstore.ValidateTxID(txid); err != nil {
		return err
	}
	return st.fencedWrite(ctx, gen, k, fmt.Sprintf("put meta of %s txid %d", k, txid),
		clientv3.OpPut(st.metaKey(k, txid), string(value)))
}

// RemoveMeta implements coordstore.Store: one transaction that deletes
// the entry's key if the owner's generation key holds gen.
func (st *Store) RemoveMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return st.fencedWrite(ctx, gen, k, fmt.Sprintf("remove meta of %s txid %d", k, txid),
		clientv3.OpDelete(st.metaKey(k, txid)))
}

// CleanupMetaBefore implements coordstore.Store: one transaction that
// deletes the range of k's entries below txid if the owner's generation
// key holds gen.
func (st *Store) CleanupMetaBefore(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	if err := k.Validate(); err != nil {
		return err
	}
	return st.fencedWrite(ctx, gen, k, fmt.Sprintf("cleanup meta of %s before txid %d", k, txid),
		clientv3.OpDelete(st.metaDir(k), clientv3.WithRange(st.metaKey(k, txid))))
}

// fencedWrite runs w in a transaction conditioned on gen being the newest
// generation of k's owner. When the condition fails, nothing is written
// and the error matches coordstore.ErrFenced. A transaction whose outcome
// is unknown fails with a retryable error; the writes are idempotent, so
// the caller may simply try again.
func (st *Store) fencedWrite(ctx context.Context, gen coordstore.Generation, k coordstore.Key, op string, w clientv3.Op) error {
	f := k.Fence(gen)
	if err := coordstore.ValidateFence(f); err != nil {
		return err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	tr, err := st.txn(ctx, []clientv3.Cmp{st.fence(k.Owner, gen)}, []clientv3.Op{w},
		[]clientv3.Op{clientv3.OpGet(st.genKey(k.Owner))})
	if err != nil {
		return st.fail(ctx, op, err)
	}
	if tr.Succeeded {
		return nil
	}
	cur, err := parseGen(k.Owner, first(tr.Responses[0].GetResponseRange().Kvs))
	if err != nil {
		return err
	}
	return coordstore.Fenced("meta of "+k.String(), f, cur)
}
