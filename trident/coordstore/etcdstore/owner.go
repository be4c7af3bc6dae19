package etcdstore

import (
	"context"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
)

// recordFormat is the first byte of a stored coordinator record.
const recordFormat = 1

// encodeRecord returns the stored form of r: the format byte, then
// coordstore.AppendRecord's wire form. The version is the key's
// ModRevision, not part of the value.
func encodeRecord(r coordstore.Record) []byte {
	return coordstore.AppendRecord([]byte{recordFormat}, r)
}

func decodeRecord(b []byte) (coordstore.Record, error) {
	if len(b) == 0 || b[0] != recordFormat {
		return coordstore.Record{}, fmt.Errorf("unknown record format (%d bytes)", len(b))
	}
	return coordstore.ParseRecord(b[1:])
}

// parseGen decodes the generation key of owner; a missing key (kv nil)
// is generation 0.
func parseGen(owner string, kv *mvccpb.KeyValue) (coordstore.Generation, error) {
	if kv == nil {
		return 0, nil
	}
	g, err := strconv.ParseUint(string(kv.Value), 10, 64)
	if err != nil || g == 0 || genValue(coordstore.Generation(g)) != string(kv.Value) {
		return 0, &coordstore.CorruptError{Where: fmt.Sprintf("generation of owner %q", owner),
			Err: fmt.Errorf("value %q is not a generation", kv.Value)}
	}
	return coordstore.Generation(g), nil
}

// first returns the first key-value of a range response, or nil.
func first(kvs []*mvccpb.KeyValue) *mvccpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	return kvs[0]
}

// fence returns the comparison every write of generation gen of owner
// carries: the owner's generation key holds gen. It fails when the key
// is missing (etcd fails every value comparison on a missing key).
func (st *Store) fence(owner string, gen coordstore.Generation) clientv3.Cmp {
	return clientv3.Compare(clientv3.Value(st.genKey(owner)), "=", genValue(gen))
}

// Acquire implements coordstore.Store: a compare-and-set loop on the
// owner's generation key. Each transaction writes g+1 if the key's
// ModRevision is still that of the g it read (0: no key), and otherwise
// returns the key as it is now, to try again from. A transaction whose
// outcome is unknown (a timeout) fails the call with a retryable error;
// if it did apply, it only leaves a generation unused.
func (st *Store) Acquire(ctx context.Context, owner string) (coordstore.Generation, error) {
	if err := coordstore.ValidateStream(owner); err != nil {
		return 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	op := fmt.Sprintf("acquire owner %q", owner)
	key := st.genKey(owner)
	resp, err := st.get(ctx, key)
	if err != nil {
		return 0, st.fail(ctx, op, err)
	}
	kv := first(resp.Kvs)
	for range acquireAttempts {
		cur, err := parseGen(owner, kv)
		if err != nil {
			return 0, err
		}
		var rev int64
		if kv != nil {
			rev = kv.ModRevision
		}
		next := cur + 1
		if next == 0 {
			return 0, &coordstore.CorruptError{Where: fmt.Sprintf("generation of owner %q", owner), Err: fmt.Errorf("generation %v cannot grow", cur)}
		}
		tr, err := st.txn(ctx,
			[]clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(key), "=", rev)},
			[]clientv3.Op{clientv3.OpPut(key, genValue(next))},
			[]clientv3.Op{clientv3.OpGet(key)})
		if err != nil {
			return 0, st.fail(ctx, op, err)
		}
		if tr.Succeeded {
			return next, nil
		}
		kv = first(tr.Responses[0].GetResponseRange().Kvs) // another Acquire won: go on from its generation
	}
	return 0, failure.Unavailable(fmt.Errorf("etcdstore: %s: gave up after losing %d compare-and-sets to concurrent Acquires", op, acquireAttempts))
}

// Generation implements coordstore.Store: a linearizable read of the
// owner's generation key.
func (st *Store) Generation(ctx context.Context, owner string) (coordstore.Generation, error) {
	if err := coordstore.ValidateStream(owner); err != nil {
		return 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	resp, err := st.get(ctx, st.genKey(owner))
	if err != nil {
		return 0, st.fail(ctx, fmt.Sprintf("read the generation of owner %q", owner), err)
	}
	return parseGen(owner, first(resp.Kvs))
}

// LoadCoordinator implements coordstore.Store: a linearizable read of the
// owner's record key; the version is the key's ModRevision.
func (st *Store) LoadCoordinator(ctx context.Context, owner string) (coordstore.Record, coordstore.Version, error) {
	if err := coordstore.ValidateStream(owner); err != nil {
		return coordstore.Record{}, 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return coordstore.Record{}, 0, err
	}
	defer end()
	resp, err := st.get(ctx, st.coordKey(owner))
	if err != nil {
		return coordstore.Record{}, 0, st.fail(ctx, fmt.Sprintf("load coordinator of owner %q", owner), err)
	}
	kv := first(resp.Kvs)
	if kv == nil {
		return coordstore.Record{}, 0, nil
	}
	r, err := decodeRecord(kv.Value)
	if err != nil {
		return coordstore.Record{}, 0, &coordstore.CorruptError{Where: fmt.Sprintf("coordinator record of owner %q", owner), Err: err}
	}
	return r, coordstore.Version(kv.ModRevision), nil
}

// SwapCoordinator implements coordstore.Store: one transaction that puts
// the record if the owner's generation key holds f.Generation and the
// record key's ModRevision is old (0: no record). The new version is the
// ModRevision of the put, the transaction's revision, which is greater
// than every earlier revision of the cluster. When the comparisons fail,
// the keys returned by the transaction tell a superseded generation
// (ErrFenced) from a version conflict (ErrConflict).
//
// A transaction whose outcome is unknown (a timeout, a lost connection)
// fails with a retryable error; the caller reloads the record to learn
// whether it applied (the package coordstore ordering contract).
func (st *Store) SwapCoordinator(ctx context.Context, f coordstore.Fence, old coordstore.Version, rec coordstore.Record) (coordstore.Version, error) {
	if err := coordstore.ValidateFence(f); err != nil {
		return 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	if old > 1<<63-1 {
		return 0, &coordstore.ConflictError{Stream: f.Owner, Want: old, Have: 0} // no revision is that high
	}
	gk, ck := st.genKey(f.Owner), st.coordKey(f.Owner)
	tr, err := st.txn(ctx,
		[]clientv3.Cmp{st.fence(f.Owner, f.Generation), clientv3.Compare(clientv3.ModRevision(ck), "=", int64(old))},
		[]clientv3.Op{clientv3.OpPut(ck, string(encodeRecord(rec)))},
		[]clientv3.Op{clientv3.OpGet(gk), clientv3.OpGet(ck, clientv3.WithKeysOnly())})
	if err != nil {
		return 0, st.fail(ctx, fmt.Sprintf("swap coordinator of owner %q from version %d", f.Owner, old), err)
	}
	if tr.Succeeded {
		return coordstore.Version(tr.Header.Revision), nil
	}
	gen, err := parseGen(f.Owner, first(tr.Responses[0].GetResponseRange().Kvs))
	if err != nil {
		return 0, err
	}
	if gen != f.Generation {
		return 0, coordstore.Fenced("coordinator of "+f.Owner, f, gen)
	}
	var have coordstore.Version
	if kv := first(tr.Responses[1].GetResponseRange().Kvs); kv != nil {
		have = coordstore.Version(kv.ModRevision)
	}
	return 0, &coordstore.ConflictError{Stream: f.Owner, Want: old, Have: have}
}
