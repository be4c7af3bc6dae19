package state

import (
	"bytes"

	"github.com/vmihailenco/msgpack/v5"
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
