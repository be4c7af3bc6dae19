package transport

// The msgpack-library encoder the hand-written one replaced, kept here as
// the reference for the differential tests: both must write the same
// bytes for the same messages.

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// refWriter is the msgpack Encoder's writer: it appends to b. The
// Encoder writes through it unbuffered, so b is always up to date.
type refWriter struct{ b []byte }

func (w *refWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *refWriter) WriteByte(c byte) error {
	w.b = append(w.b, c)
	return nil
}

func (w *refWriter) WriteString(s string) (int, error) {
	w.b = append(w.b, s...)
	return len(s), nil
}

// encoder appends messages in the wire format (see frame.go) to w.b. It
// is not safe for concurrent use.
type refEncoder struct {
	w       refWriter
	enc     *msgpack.Encoder
	types   *Types
	scratch []byte
}

func newRefEncoder(types *Types) *refEncoder {
	e := &refEncoder{types: types}
	e.enc = msgpack.NewEncoder(&e.w)
	return e
}

// message appends m. On error the bytes appended so far are left in w.b;
// the caller truncates.
func (e *refEncoder) message(m *Message) error {
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

// value appends one tuple value. The msgpack Encoder writes into an
// refWriter, which never fails, so its errors are not checked.
func (e *refEncoder) value(v any, depth int) error {
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
func (e *refEncoder) sized(tag byte, v any) {
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
