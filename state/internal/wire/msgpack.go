// Package wire holds the byte formats of squall's state layer: the
// versioned envelopes in which the opaque, transactional and plain map
// flavours store a value, and msgpack readers written by hand for the hot
// paths. The envelopes write numbers with the appenders of the canonical
// key encoding (internal/keyenc), as keys do.
package wire

import (
	"errors"
	"fmt"
	"math"
)

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
