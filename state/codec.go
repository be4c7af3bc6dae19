package state

import (
	"bytes"
	"math"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/squallstream/squall/internal/keyenc"
	"github.com/squallstream/squall/state/internal/wire"
)

// Codec turns user values into bytes and back. The map flavours nest the
// bytes inside their own msgpack envelope without copying them into a
// second layer of encoding, so Marshal must return exactly one msgpack
// value (a map flavour checks this and fails with ErrBadValue otherwise).
// Unmarshal must return a new value that shares no memory with b or with
// any earlier result.
type Codec[V any] interface {
	Marshal(v V) ([]byte, error)
	Unmarshal(b []byte) (V, error)
}

// Msgpack is the default Codec: msgpack with compact integers and, for the
// map types msgpack can sort, sorted map keys. Structs are encoded as maps
// of their field names unless they ask for as_array.
type Msgpack[V any] struct{}

// Marshal encodes v.
func (Msgpack[V]) Marshal(v V) ([]byte, error) {
	// Counters and sums first, without reflection; the bytes are the ones
	// msgpack writes.
	switch x := any(v).(type) {
	case int64:
		return keyenc.AppendInt(make([]byte, 0, 9), x), nil
	case int:
		return keyenc.AppendInt(make([]byte, 0, 9), int64(x)), nil
	case uint64:
		return keyenc.AppendUint(make([]byte, 0, 9), x), nil
	case float64:
		return keyenc.AppendUint64Code(make([]byte, 0, 9), 0xcb, math.Float64bits(x)), nil
	case string:
		return keyenc.AppendString(make([]byte, 0, len(x)+5), x), nil
	}
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes a fresh V from b.
func (Msgpack[V]) Unmarshal(b []byte) (V, error) {
	var v V
	switch p := any(&v).(type) {
	case *int64:
		if n, ok := wire.ParseInt(b); ok {
			*p = n
			return v, nil
		}
	case *int:
		if n, ok := wire.ParseInt(b); ok && n == int64(int(n)) {
			*p = int(n)
			return v, nil
		}
	}
	err := msgpack.Unmarshal(b, &v)
	return v, err
}

// MapOptions configures the opaque, transactional and non-transactional
// maps. The zero value is ready to use.
type MapOptions[V any] struct {
	// Codec encodes user values. Zero means Msgpack[V].
	Codec Codec[V]
	// Name identifies the map in errors. Zero means NameOf(backing map).
	Name string
}

// CodecOrDefault returns o.Codec, or Msgpack[V] when it is nil.
func (o MapOptions[V]) CodecOrDefault() Codec[V] {
	if o.Codec == nil {
		return Msgpack[V]{}
	}
	return o.Codec
}
