package state

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/squallstream/squall/internal/keyenc"
)

// Key identifies one entry of a map state: the list of group-by values of
// a group, such as ("room-7", 14) for a room and an hour.
//
// A Key carries its values and their canonical encoding, computed once by
// NewKey. Two keys are the same key exactly when their encodings are equal;
// maps, caches and stores compare and index keys by Encoded, never by the
// values. The encoding is a msgpack array of the values, each encoded by
// the canonical key encoding that fields grouping (topology.ByFields) also
// routes by:
//
//   - integers use the smallest msgpack representation, so int(5), int64(5)
//     and uint8(5) are the same key;
//   - floats keep their width (float32 or float64) and are never the same
//     key as an integer;
//   - strings and byte slices are different keys even with equal bytes;
//     named types are the same key as their underlying type's values;
//   - time.Time uses msgpack's timestamp extension: the instant, whatever
//     its zone or monotonic clock reading;
//   - pointers encode what they point to; slices, arrays and structs
//     (exported fields) encode element by element; maps, channels and
//     functions are rejected because their encoding is not stable.
//
// The zero Key is the empty key, the same as NewKey().
type Key struct {
	enc  string
	vals []any
}

// emptyKeyEncoding is the msgpack encoding of an empty array.
const emptyKeyEncoding = "\x90"

// NewKey builds the key of the given group-by values. It fails with
// ErrBadKey when a value has no stable encoding.
func NewKey(vals ...any) (Key, error) {
	buf := make([]byte, 0, 16*len(vals)+4)
	buf = keyenc.AppendArrayLen(buf, len(vals))
	for i, v := range vals {
		var err error
		buf, err = keyenc.Append(buf, v)
		if err != nil {
			return Key{}, fmt.Errorf("%w: element %d (%T): %v", ErrBadKey, i, v, err)
		}
	}
	return Key{enc: string(buf), vals: append([]any(nil), vals...)}, nil
}

// MustKey is NewKey for values known to be valid, such as constants in
// tests; it panics on an invalid value.
func MustKey(vals ...any) Key {
	k, err := NewKey(vals...)
	if err != nil {
		panic(err)
	}
	return k
}

// DecodeKey rebuilds a key from its canonical encoding, as stored by a
// backing map. Values come back as msgpack decodes them into interfaces
// (integers as the smallest fitting Go integer type, byte slices as
// []byte, arrays as []any); the rebuilt key has the same encoding as the
// original.
func DecodeKey(enc []byte) (Key, error) {
	dec := msgpack.NewDecoder(bytes.NewReader(enc))
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	if n < 0 {
		return Key{}, fmt.Errorf("%w: nil array", ErrBadKey)
	}
	vals := make([]any, n)
	for i := range vals {
		if vals[i], err = dec.DecodeInterface(); err != nil {
			return Key{}, fmt.Errorf("%w: element %d: %v", ErrBadKey, i, err)
		}
	}
	k, err := NewKey(vals...)
	if err != nil {
		return Key{}, err
	}
	if k.enc != string(enc) {
		return Key{}, fmt.Errorf("%w: encoding is not canonical", ErrBadKey)
	}
	return k, nil
}

// Encoded returns the canonical encoding of the key. It is a binary string,
// suitable as a Go map key and as the key bytes of a store.
func (k Key) Encoded() string {
	if k.enc == "" {
		return emptyKeyEncoding
	}
	return k.enc
}

// Values returns a copy of the group-by values.
func (k Key) Values() []any { return append([]any(nil), k.vals...) }

// Len returns the number of values in the key.
func (k Key) Len() int { return len(k.vals) }

// Equal reports whether k and o are the same key.
func (k Key) Equal(o Key) bool { return k.Encoded() == o.Encoded() }

// String formats the values for logs and errors, e.g. [room-7 14].
func (k Key) String() string { return fmt.Sprint(k.vals) }
