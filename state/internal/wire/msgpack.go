// Package wire holds the byte formats of squall's state layer: msgpack
// primitives written by hand for the hot paths (keys and envelopes), and the
// versioned envelopes in which the opaque, transactional and plain map
// flavours store a value.
package wire

import (
	"errors"
	"fmt"
	"math"
)

// The functions below append msgpack values in their most compact form,
// exactly as msgpack.Encoder does with UseCompactInts(true).

// AppendArrayLen appends an array header for n elements.
func AppendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	default:
		return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendUint appends an unsigned integer.
func AppendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, 0xce, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return AppendUint64Code(b, 0xcf, n)
	}
}

// AppendInt appends a signed integer.
func AppendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return AppendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return append(b, 0xd1, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return append(b, 0xd2, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return AppendUint64Code(b, 0xd3, uint64(n))
	}
}

// AppendUint64Code appends code followed by the 8 big-endian bytes of n.
func AppendUint64Code(b []byte, code byte, n uint64) []byte {
	return append(b, code, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32),
		byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendString appends a str value.
func AppendString(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

// AppendBin appends a bin value.
func AppendBin(b []byte, p []byte) []byte {
	n := len(p)
	switch {
	case n <= math.MaxUint8:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xc5, byte(n>>8), byte(n))
	default:
		b = append(b, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, p...)
}

// ErrTrailing reports bytes left over after a complete value.
var ErrTrailing = errors.New("trailing bytes after the value")

// CheckValue reports whether raw holds exactly one msgpack value.
func CheckValue(raw []byte) error {
	if len(raw) == 0 {
		return errors.New("empty value")
	}
	n, err := ValueLen(raw)
	if err != nil {
		return fmt.Errorf("not a msgpack value: %w", err)
	}
	if n != len(raw) {
		return ErrTrailing
	}
	return nil
}

// ParseInt decodes b when it is exactly one msgpack integer that fits an
// int64. ok is false for anything else; callers then use a full decoder.
func ParseInt(b []byte) (n int64, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	c, p := b[0], b[1:]
	be := func(k int) (uint64, bool) {
		if len(p) != k {
			return 0, false
		}
		var u uint64
		for _, x := range p {
			u = u<<8 | uint64(x)
		}
		return u, true
	}
	switch {
	case c <= 0x7f:
		return int64(c), len(p) == 0
	case c >= 0xe0:
		return int64(int8(c)), len(p) == 0
	}
	switch c {
	case 0xcc, 0xcd, 0xce:
		u, ok := be(1 << (c - 0xcc))
		return int64(u), ok
	case 0xcf:
		u, ok := be(8)
		return int64(u), ok && u <= math.MaxInt64
	case 0xd0:
		u, ok := be(1)
		return int64(int8(u)), ok
	case 0xd1:
		u, ok := be(2)
		return int64(int16(u)), ok
	case 0xd2:
		u, ok := be(4)
		return int64(int32(u)), ok
	case 0xd3:
		u, ok := be(8)
		return int64(u), ok
	}
	return 0, false
}
