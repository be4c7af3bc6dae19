package opaque

import (
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/core"
	"github.com/squallstream/squall/state/internal/wire"
	"github.com/squallstream/squall/txn"
)

// record is a stored opaque value with the user values still encoded.
type record = Value[[]byte]

// format stores a record as the opaque envelope
// [kind|version, txid, curr] or [kind|version, txid, curr, prev], and a
// tombstone as [kind|removed|version, txid] or [..., txid, prev].
var format = core.Format[record]{
	Append: func(dst []byte, r record) []byte {
		return wire.AppendOpaque(dst, wire.Opaque{
			TxID: uint64(r.TxID), Curr: r.Curr, Prev: r.Prev, HasPrev: r.HasPrev, Removed: r.Removed,
		})
	},
	Parse: func(b []byte) (record, error) {
		o, err := wire.ParseOpaque(b)
		if err != nil {
			return record{}, err
		}
		return record{TxID: txn.TxID(o.TxID), Curr: o.Curr, Prev: o.Prev, HasPrev: o.HasPrev, Removed: o.Removed}, nil
	},
	Removed: func(r record) bool { return r.Removed },
}

// Encode returns the stored bytes of v, with user values encoded by codec
// (nil means state.Msgpack). Tools and tests use it to write or inspect a
// store directly.
func Encode[V any](v Value[V], codec state.Codec[V]) ([]byte, error) {
	if codec == nil {
		codec = state.Msgpack[V]{}
	}
	r := record{TxID: v.TxID, HasPrev: v.HasPrev, Removed: v.Removed}
	if !v.Removed {
		curr, err := core.Encode(codec, v.Curr)
		if err != nil {
			return nil, err
		}
		r.Curr = curr
	}
	var err error
	if v.HasPrev {
		if r.Prev, err = core.Encode(codec, v.Prev); err != nil {
			return nil, err
		}
	}
	return format.Append(nil, r), nil
}

// Decode parses stored bytes written by a Map into a Value, decoding user
// values with codec (nil means state.Msgpack).
func Decode[V any](b []byte, codec state.Codec[V]) (Value[V], error) {
	if codec == nil {
		codec = state.Msgpack[V]{}
	}
	r, err := format.Parse(b)
	if err != nil {
		return Value[V]{}, err
	}
	v := Value[V]{TxID: r.TxID, HasPrev: r.HasPrev, Removed: r.Removed}
	if !r.Removed {
		if v.Curr, err = codec.Unmarshal(r.Curr); err != nil {
			return Value[V]{}, err
		}
	}
	if r.HasPrev {
		if v.Prev, err = codec.Unmarshal(r.Prev); err != nil {
			return Value[V]{}, err
		}
	}
	return v, nil
}
