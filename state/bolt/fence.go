package bolt

import (
	"context"
	"encoding/binary"

	bbolt "go.etcd.io/bbolt"

	"github.com/squallstream/squall/state"
)

// FenceBucket is the bucket in which a file keeps, per map bucket and
// owner, the newest owner generation that wrote or admitted it (an 8-byte
// big-endian generation under the key "<bucket>\x00<owner>"). It is kept in
// the file, so it outlives the process: a superseded process that opens the
// file again after the newer owner released it is still refused, as
// Cassandra's fencing table refuses it (docs/cassandra.md, "Fencing").
const FenceBucket = "squall_fences"

// admitTx records the fence ctx carries for bucket inside tx, a read-write
// transaction, and returns a *state.FencedError if a newer generation of
// its owner was recorded before. A context without a fence is admitted.
// Called inside the transaction of the write it guards, so no write of an
// older generation commits after a newer one was admitted.
func admitTx(ctx context.Context, tx *bbolt.Tx, bucket []byte, where string) error {
	f, ok := state.FenceOf(ctx)
	if !ok {
		return nil
	}
	fb, err := tx.CreateBucketIfNotExists([]byte(FenceBucket))
	if err != nil {
		return err
	}
	key := append(append(append([]byte{}, bucket...), 0), f.Owner...)
	var cur state.Generation
	if v := fb.Get(key); len(v) == 8 {
		cur = state.Generation(binary.BigEndian.Uint64(v))
	}
	switch {
	case f.Generation < cur:
		return &state.FencedError{Where: where, Fence: f, Current: cur}
	case f.Generation == cur:
		return nil
	}
	return fb.Put(key, binary.BigEndian.AppendUint64(nil, uint64(f.Generation)))
}
