package transport

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// extSized is the extension id of the sized integers (int8 … int64,
// uint, uint8 … uint64): one tag byte, then the value big-endian in the
// type's width. Plain msgpack integers are Go ints.
const extSized int8 = 1

// extTime is msgpack's timestamp extension.
const extTime int8 = -1

// maxDepth bounds the nesting of slices and maps in a value, on both
// sides: deeper values are rejected rather than risking the stack.
const maxDepth = 32

// Tags of the sized integers inside extSized.
const (
	tagInt8 byte = 1 + iota
	tagInt16
	tagInt32
	tagInt64
	tagUint
	tagUint8
	tagUint16
	tagUint32
	tagUint64
)

// sizedTag returns the tag of a sized integer.
func sizedTag(v any) (byte, bool) {
	switch v.(type) {
	case int8:
		return tagInt8, true
	case int16:
		return tagInt16, true
	case int32:
		return tagInt32, true
	case int64:
		return tagInt64, true
	case uint:
		return tagUint, true
	case uint8:
		return tagUint8, true
	case uint16:
		return tagUint16, true
	case uint32:
		return tagUint32, true
	case uint64:
		return tagUint64, true
	}
	return 0, false
}

// appendWriter is the msgpack Encoder's writer: it appends to b. The
// Encoder writes through it unbuffered, so b is always up to date.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *appendWriter) WriteByte(c byte) error {
	w.b = append(w.b, c)
	return nil
}

func (w *appendWriter) WriteString(s string) (int, error) {
	w.b = append(w.b, s...)
	return len(s), nil
}

// encoder appends messages in the wire format (see frame.go) to w.b. It
// is not safe for concurrent use.
type encoder struct {
	w       appendWriter
	enc     *msgpack.Encoder
	types   *Types
	scratch []byte
}

func newEncoder(types *Types) *encoder {
	e := &encoder{types: types}
	e.enc = msgpack.NewEncoder(&e.w)
	return e
}

// message appends m. On error the bytes appended so far are left in w.b;
// the caller truncates.
func (e *encoder) message(m *Message) error {
	enc := e.enc
	n := fieldCount(m.Kind)
	if n == 0 {
		return fmt.Errorf("transport: cannot send a message of %v", m.Kind)
	}
	enc.EncodeArrayLen(n)
	enc.EncodeUint(uint64(m.Kind))
	enc.EncodeInt(int64(m.Task))
	switch m.Kind {
	case KindTuple:
		enc.EncodeString(m.Stream)
		enc.EncodeInt(int64(m.Source))
		enc.EncodeArrayLen(2 * len(m.Anchors))
		for _, a := range m.Anchors {
			enc.EncodeUint(uint64(a.Root))
			enc.EncodeUint(a.Edge)
		}
		enc.EncodeArrayLen(len(m.Values))
		for i, v := range m.Values {
			if err := e.value(v, 1); err != nil {
				return prefixPath(err, "values["+strconv.Itoa(i)+"]")
			}
		}
	case KindInit:
		enc.EncodeUint(uint64(m.Root))
		enc.EncodeUint(m.XOR)
		enc.EncodeInt(int64(m.Source))
	case KindAck:
		enc.EncodeUint(uint64(m.Root))
		enc.EncodeUint(m.XOR)
	case KindFail, KindReset:
		enc.EncodeUint(uint64(m.Root))
	case KindOutcome:
		enc.EncodeUint(uint64(m.Root))
		enc.EncodeUint(uint64(m.Status))
	}
	return nil
}

// fieldCount returns the number of fields of a message of kind k on the
// wire, kind and task included, or 0 for an invalid kind.
func fieldCount(k Kind) int {
	switch k {
	case KindTuple:
		return 6
	case KindInit:
		return 5
	case KindAck, KindOutcome:
		return 4
	case KindFail, KindReset:
		return 3
	}
	return 0
}

// value appends one tuple value. The msgpack Encoder writes into an
// appendWriter, which never fails, so its errors are not checked.
func (e *encoder) value(v any, depth int) error {
	enc := e.enc
	switch x := v.(type) {
	case nil:
		enc.EncodeNil()
	case string:
		enc.EncodeString(x)
	case int:
		enc.EncodeInt(int64(x))
	case float64:
		enc.EncodeFloat64(x)
	case bool:
		enc.EncodeBool(x)
	case []byte: // nil too: msgpack's EncodeBytes would turn it into nil
		enc.EncodeBytesLen(len(x))
		e.w.b = append(e.w.b, x...)
	case time.Time:
		enc.EncodeTime(x)
	case float32:
		enc.EncodeFloat32(x)
	case []any:
		if depth >= maxDepth {
			return &ValueError{Type: reflect.TypeOf(v), Reason: "nested too deeply"}
		}
		enc.EncodeArrayLen(len(x))
		for i, el := range x {
			if err := e.value(el, depth+1); err != nil {
				return prefixPath(err, "["+strconv.Itoa(i)+"]")
			}
		}
	case map[string]any:
		if depth >= maxDepth {
			return &ValueError{Type: reflect.TypeOf(v), Reason: "nested too deeply"}
		}
		enc.EncodeMapLen(len(x))
		for k, el := range x {
			enc.EncodeString(k)
			if err := e.value(el, depth+1); err != nil {
				return prefixPath(err, "["+strconv.Quote(k)+"]")
			}
		}
	default:
		if tag, ok := sizedTag(v); ok {
			e.sized(tag, v)
			return nil
		}
		t := e.types.lookupType(reflect.TypeOf(v))
		if t == nil {
			return &ValueError{Type: reflect.TypeOf(v)}
		}
		var err error
		e.scratch, err = t.enc(e.scratch[:0], v)
		if err != nil {
			return &ValueError{Type: reflect.TypeOf(v), Reason: err.Error()}
		}
		enc.EncodeExtHeader(t.id, len(e.scratch))
		e.w.b = append(e.w.b, e.scratch...)
	}
	return nil
}

// sized appends a sized integer as extSized.
func (e *encoder) sized(tag byte, v any) {
	var u uint64
	width := 8
	switch x := v.(type) {
	case int8:
		u, width = uint64(x), 1
	case int16:
		u, width = uint64(x), 2
	case int32:
		u, width = uint64(x), 4
	case int64:
		u = uint64(x)
	case uint:
		u = uint64(x)
	case uint8:
		u, width = uint64(x), 1
	case uint16:
		u, width = uint64(x), 2
	case uint32:
		u, width = uint64(x), 4
	case uint64:
		u = x
	}
	e.enc.EncodeExtHeader(extSized, 1+width)
	var buf [9]byte
	buf[0] = tag
	binary.BigEndian.PutUint64(buf[1:], u<<(64-8*width))
	e.w.b = append(e.w.b, buf[:1+width]...)
}

// prefixPath puts p in front of the path of a *ValueError.
func prefixPath(err error, p string) error {
	if ve, ok := err.(*ValueError); ok {
		ve.Path = p + ve.Path
	}
	return err
}

// sizedWidth returns the width in bytes of the sized integer tag.
func sizedWidth(tag byte) int {
	switch tag {
	case tagInt8, tagUint8:
		return 1
	case tagInt16, tagUint16:
		return 2
	case tagInt32, tagUint32:
		return 4
	case tagInt64, tagUint, tagUint64:
		return 8
	}
	return 0
}
