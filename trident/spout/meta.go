package spout

import (
	"context"
	"fmt"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// metaStore reads and writes the metadata entries of a stream's
// partitions: the value of partition p for txid N describes p's batch in
// N (or is a marker: p had no batch in N).
type metaStore[M any] struct {
	store  coordstore.Store
	stream string
	fence  coordstore.Fence
	codec  Codec[M]
}

func (s *metaStore[M]) key(p Partition) coordstore.Key {
	return coordstore.Key{Owner: s.fence.Owner, Stream: s.stream, Partition: string(p)}
}

func (s *metaStore[M]) fail(p Partition, txid txn.TxID, op string, err error) error {
	return &PartitionError{Stream: s.stream, Partition: p, TxID: txid, Op: op, Err: err}
}

// get returns p's entry for txid: found, and if so whether it is a marker
// and the metadata.
func (s *metaStore[M]) get(ctx context.Context, p Partition, txid txn.TxID) (m M, found, isMark bool, err error) {
	v, ok, err := s.store.GetMeta(ctx, s.key(p), txid)
	if err != nil || !ok {
		return m, false, false, s.wrap(p, txid, "load", err)
	}
	if isMarker(v) {
		return m, true, true, nil
	}
	m, err = decodeMeta(s.codec, v)
	if err != nil {
		return m, false, false, s.fail(p, txid, "load", err)
	}
	return m, true, false, nil
}

// before returns the metadata of p's last batch below txid below,
// skipping markers, its txid, and whether there is one. Errors name the
// batch txid.
func (s *metaStore[M]) before(ctx context.Context, p Partition, txid, below txn.TxID) (m M, at txn.TxID, ok bool, err error) {
	k := s.key(p)
	for {
		e, found, err := s.store.PrevMeta(ctx, k, below)
		if err != nil {
			return m, 0, false, s.fail(p, txid, "load", err)
		}
		if !found {
			return m, 0, false, nil
		}
		if !isMarker(e.Value) {
			m, err = decodeMeta(s.codec, e.Value)
			if err != nil {
				return m, 0, false, s.fail(p, txid, fmt.Sprintf("load txid %d", e.TxID), err)
			}
			return m, e.TxID, true, nil
		}
		below = e.TxID
	}
}

// put stores p's batch in txid, or a marker if skipped.
func (s *metaStore[M]) put(ctx context.Context, p Partition, txid txn.TxID, m M, skipped bool) error {
	v := marker
	if !skipped {
		var err error
		if v, err = encodeMeta(s.codec, m); err != nil {
			return s.fail(p, txid, "store", err)
		}
	}
	if err := s.store.PutMeta(ctx, s.fence.Generation, s.key(p), txid, v); err != nil {
		return s.fail(p, txid, "store", err)
	}
	return nil
}

// cleanup deletes p's entries before txid.
func (s *metaStore[M]) cleanup(ctx context.Context, p Partition, txid txn.TxID) error {
	if err := s.store.CleanupMetaBefore(ctx, s.fence.Generation, s.key(p), txid); err != nil {
		return s.fail(p, txid, "clean up", err)
	}
	return nil
}

// wrap is fail for a possibly nil err.
func (s *metaStore[M]) wrap(p Partition, txid txn.TxID, op string, err error) error {
	if err == nil {
		return nil
	}
	return s.fail(p, txid, op, err)
}
