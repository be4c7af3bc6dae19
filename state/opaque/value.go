package opaque

import (
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// Value is an opaque value: Curr as written by batch TxID, and Prev, the
// value before that batch (absent when TxID was the first batch to write
// the key). It is Storm's OpaqueValue. Removed marks a tombstone: batch
// TxID removed the key, Curr is absent (Storm's OpaqueValue with a null
// curr, as MemoryMapState.multiRemove writes it).
type Value[V any] struct {
	TxID    txn.TxID
	Curr    V
	Prev    V
	HasPrev bool
	Removed bool
}

// Get returns the value batch sees as the key's old value:
//
//   - batch 0 (no transaction) or batch > TxID: Curr (absent if Removed);
//   - batch == TxID (a replay of the batch that wrote Curr): Prev, which
//     may be absent;
//   - batch < TxID: a *state.BehindError.
func (v Value[V]) Get(batch txn.TxID) (state.Entry[V], error) {
	switch {
	case batch == 0 || v.TxID < batch:
		if v.Removed {
			return state.Entry[V]{}, nil
		}
		return state.Entry[V]{Val: v.Curr, Found: true}, nil
	case batch == v.TxID:
		return state.Entry[V]{Val: v.Prev, Found: v.HasPrev}, nil
	default:
		return state.Entry[V]{}, &state.BehindError{Batch: batch, Stored: v.TxID}
	}
}

// Update returns the value after batch wrote newVal: TxID batch, Curr
// newVal, and as Prev the value Get(batch) would return. Batch 0 is
// state.ErrNoTxID and a batch behind TxID a *state.BehindError.
func (v Value[V]) Update(batch txn.TxID, newVal V) (Value[V], error) {
	if batch == 0 {
		return Value[V]{}, state.ErrNoTxID
	}
	prev, err := v.Get(batch)
	if err != nil {
		return Value[V]{}, err
	}
	return Value[V]{TxID: batch, Curr: newVal, Prev: prev.Val, HasPrev: prev.Found}, nil
}

// Remove returns the tombstone batch leaves when it removes the key:
// TxID batch, Removed, and as Prev the value Get(batch) would return, so
// that a replay of batch starts again from the value before it. Batch 0
// is state.ErrNoTxID and a batch behind TxID a *state.BehindError.
func (v Value[V]) Remove(batch txn.TxID) (Value[V], error) {
	if batch == 0 {
		return Value[V]{}, state.ErrNoTxID
	}
	prev, err := v.Get(batch)
	if err != nil {
		return Value[V]{}, err
	}
	return Value[V]{TxID: batch, Prev: prev.Val, HasPrev: prev.Found, Removed: true}, nil
}

// First returns the value of a key first written by batch.
func First[V any](batch txn.TxID, val V) Value[V] {
	return Value[V]{TxID: batch, Curr: val}
}
