package transport

import (
	"encoding/binary"
	"math"
	"math/bits"
	"time"
)

// The append functions write msgpack into a byte slice, each in the
// smallest encoding msgpack has for the value, as the msgpack library's
// Encoder does.

// appendUint appends a non-negative integer.
func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= codePosFixIntHi:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, codeUint8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeUint16), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, codeUint32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, codeUint64), n)
}

// appendInt appends a signed integer.
func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n)) // negative fixint
	case n >= math.MinInt8:
		return append(b, codeInt8, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, codeInt16), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, codeInt32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, codeInt64), uint64(n))
}

// appendLen appends the header of a str, bin or ext of n bytes in its
// 8-, 16- or 32-bit form; code8 is the 8-bit form's code, and the other
// two follow it.
func appendLen(b []byte, code8 byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, code8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, code8+1), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, code8+2), uint32(n))
}

// appendString appends a str.
func appendString(b []byte, s string) []byte {
	if len(s) < 32 {
		b = append(b, codeFixStrLow|byte(len(s)))
	} else {
		b = appendLen(b, codeStr8, len(s))
	}
	return append(b, s...)
}

// appendArrayLen appends the header of an array of n elements.
func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, codeFixArrLow|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeArray16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, codeArray32), uint32(n))
}

// appendMapLen appends the header of a map of n entries.
func appendMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, codeFixMapLow|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeMap16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, codeMap32), uint32(n))
}

// appendExtHeader appends the header of an extension of n bytes.
func appendExtHeader(b []byte, id int8, n int) []byte {
	switch n {
	case 1, 2, 4, 8, 16:
		b = append(b, codeFixExt1+byte(bits.TrailingZeros(uint(n))))
	default:
		b = appendLen(b, codeExt8, n)
	}
	return append(b, byte(id))
}

// appendTime appends msgpack's timestamp extension: 32-bit seconds when
// they fit and there are no nanoseconds, else 34-bit seconds and 30-bit
// nanoseconds, else 96 bits.
func appendTime(b []byte, t time.Time) []byte {
	secs := uint64(t.Unix())
	if secs>>34 == 0 {
		data := uint64(t.Nanosecond())<<34 | secs
		if data>>32 == 0 {
			return binary.BigEndian.AppendUint32(appendExtHeader(b, extTime, 4), uint32(data))
		}
		return binary.BigEndian.AppendUint64(appendExtHeader(b, extTime, 8), data)
	}
	b = appendExtHeader(b, extTime, 12)
	b = binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
	return binary.BigEndian.AppendUint64(b, secs)
}
