package transport

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
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

// wireBuf is the buffer an encoder appends to.
type wireBuf struct{ b []byte }

// encoder appends messages in the wire format (see frame.go) to w.b,
// writing msgpack itself: every integer, length and header in its
// smallest encoding, floats at their own width, which is what the
// msgpack library's Encoder writes for the same calls (encode_ref_test.go
// checks it byte for byte). It also adds up in cost a bound of what
// decoding the messages will charge the receiver's budget (see
// FrameBudget and costFrameBase). It is not safe for concurrent use.
type encoder struct {
	w       wireBuf
	types   *Types
	scratch []byte
	cost    int
}

func newEncoder(types *Types) *encoder {
	return &encoder{types: types}
}

// message appends m. On error the bytes appended so far are left in w.b;
// the caller truncates.
func (e *encoder) message(m *Message) error {
	n := fieldCount(m.Kind)
	if n == 0 {
		return fmt.Errorf("transport: cannot send a message of %v", m.Kind)
	}
	b := appendArrayLen(e.w.b, n)
	b = appendUint(b, uint64(m.Kind))
	b = appendInt(b, int64(m.Task))
	e.cost += costMessageBound
	switch m.Kind {
	case KindTuple:
		e.cost += costAlloc(len(m.Stream)) + costTake(len(m.Values))
		if len(m.Anchors) > 0 {
			e.cost += costTake(len(m.Anchors))
		}
		b = appendString(b, m.Stream)
		b = appendInt(b, int64(m.Source))
		b = appendArrayLen(b, 2*len(m.Anchors))
		for _, a := range m.Anchors {
			b = appendUint(b, uint64(a.Root))
			b = appendUint(b, a.Edge)
		}
		e.w.b = appendArrayLen(b, len(m.Values))
		for i, v := range m.Values {
			if err := e.value(v, 1); err != nil {
				return prefixPath(err, "values["+strconv.Itoa(i)+"]")
			}
		}
		return nil
	case KindInit:
		b = appendUint(b, uint64(m.Root))
		b = appendUint(b, m.XOR)
		b = appendInt(b, int64(m.Source))
	case KindAck:
		b = appendUint(b, uint64(m.Root))
		b = appendUint(b, m.XOR)
	case KindFail, KindReset:
		b = appendUint(b, uint64(m.Root))
	case KindOutcome:
		b = appendUint(b, uint64(m.Root))
		b = appendUint(b, uint64(m.Status))
	}
	e.w.b = b
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

// value appends one tuple value.
func (e *encoder) value(v any, depth int) error {
	b := e.w.b
	switch x := v.(type) {
	case nil:
		b = append(b, codeNil)
	case string:
		b = appendString(b, x)
		e.cost += costString(len(x))
	case int:
		b = appendInt(b, int64(x))
		e.cost += costInt(uint64(x))
	case float64:
		e.cost += costScalar
		b = append(b, codeFloat64)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
	case bool:
		if x {
			b = append(b, codeTrue)
		} else {
			b = append(b, codeFalse)
		}
	case []byte: // nil too: it arrives empty
		b = appendLen(b, codeBin8, len(x))
		b = append(b, x...)
		e.cost += costBin(len(x))
	case time.Time:
		b = appendTime(b, x)
		e.cost += costTime
	case float32:
		e.cost += costScalar
		b = append(b, codeFloat32)
		b = binary.BigEndian.AppendUint32(b, math.Float32bits(x))
	case []any:
		if depth >= maxDepth {
			return &ValueError{Type: reflect.TypeOf(v), Reason: "nested too deeply"}
		}
		e.w.b = appendArrayLen(b, len(x))
		e.cost += costArray(len(x))
		for i, el := range x {
			if err := e.value(el, depth+1); err != nil {
				return prefixPath(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return nil
	case map[string]any:
		if depth >= maxDepth {
			return &ValueError{Type: reflect.TypeOf(v), Reason: "nested too deeply"}
		}
		e.w.b = appendMapLen(b, len(x))
		e.cost += costMap(len(x))
		for k, el := range x {
			e.w.b = appendString(e.w.b, k)
			e.cost += costAlloc(len(k))
			if err := e.value(el, depth+1); err != nil {
				return prefixPath(err, "["+strconv.Quote(k)+"]")
			}
		}
		return nil
	default:
		if tag, ok := sizedTag(v); ok {
			b = appendSized(b, tag, v)
			e.cost += costScalar
			break
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
		b = appendExtHeader(b, t.id, len(e.scratch))
		b = append(b, e.scratch...)
		e.cost += costExt(len(e.scratch))
	}
	e.w.b = b
	return nil
}

// appendSized appends a sized integer as extSized.
func appendSized(b []byte, tag byte, v any) []byte {
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
	b = appendExtHeader(b, extSized, 1+width)
	b = append(b, tag)
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], u<<(64-8*width))
	return append(b, buf[:width]...)
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
