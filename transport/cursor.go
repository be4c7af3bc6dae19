package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// msgpack format codes, as the encoder writes them and the decoder reads
// them (see the msgpack specification).
const (
	codePosFixIntHi = 0x7f
	codeFixMapLow   = 0x80
	codeFixMapHigh  = 0x8f
	codeFixArrLow   = 0x90
	codeFixArrHigh  = 0x9f
	codeFixStrLow   = 0xa0
	codeFixStrHigh  = 0xbf
	codeNil         = 0xc0
	codeFalse       = 0xc2
	codeTrue        = 0xc3
	codeBin8        = 0xc4
	codeBin16       = 0xc5
	codeBin32       = 0xc6
	codeExt8        = 0xc7
	codeExt16       = 0xc8
	codeExt32       = 0xc9
	codeFloat32     = 0xca
	codeFloat64     = 0xcb
	codeUint8       = 0xcc
	codeUint16      = 0xcd
	codeUint32      = 0xce
	codeUint64      = 0xcf
	codeInt8        = 0xd0
	codeInt16       = 0xd1
	codeInt32       = 0xd2
	codeInt64       = 0xd3
	codeFixExt1     = 0xd4
	codeFixExt16    = 0xd8
	codeStr8        = 0xd9
	codeStr16       = 0xda
	codeStr32       = 0xdb
	codeArray16     = 0xdc
	codeArray32     = 0xdd
	codeMap16       = 0xde
	codeMap32       = 0xdf
	codeNegFixIntLo = 0xe0
)

var errShort = errors.New("unexpected end of frame")

// cursor reads msgpack from a byte slice. Every read checks its length
// against the bytes left first; nothing is copied.
type cursor struct {
	b   []byte
	pos int
}

func (c *cursor) reset(b []byte) { c.b, c.pos = b, 0 }

// left returns the number of bytes not read yet.
func (c *cursor) left() int { return len(c.b) - c.pos }

// peek returns the next byte without consuming it.
func (c *cursor) peek() (byte, error) {
	if c.pos >= len(c.b) {
		return 0, errShort
	}
	return c.b[c.pos], nil
}

// next consumes and returns the next byte.
func (c *cursor) next() (byte, error) {
	if c.pos >= len(c.b) {
		return 0, errShort
	}
	c.pos++
	return c.b[c.pos-1], nil
}

// take consumes the next n bytes and returns them, not copied (with no
// spare capacity, so appending to them cannot overwrite the frame).
func (c *cursor) take(n int) ([]byte, error) {
	if n < 0 || n > c.left() {
		return nil, fmt.Errorf("%d bytes wanted, %d left", n, c.left())
	}
	b := c.b[c.pos : c.pos+n : c.pos+n]
	c.pos += n
	return b, nil
}

// uintN consumes a big-endian unsigned integer of n bytes (1, 2, 4 or 8).
func (c *cursor) uintN(n int) (uint64, error) {
	if n > c.left() {
		return 0, errShort
	}
	b := c.b[c.pos : c.pos+n]
	c.pos += n
	switch n {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(b)), nil
	}
	return binary.BigEndian.Uint64(b), nil
}

// integer consumes any msgpack integer, or nil as 0, and returns its
// two's complement bits: signed encodings are sign-extended, so the
// caller converts to int64 or keeps the uint64.
func (c *cursor) integer() (uint64, error) {
	code, err := c.next()
	if err != nil {
		return 0, err
	}
	if code <= codePosFixIntHi || code >= codeNegFixIntLo {
		return uint64(int64(int8(code))), nil
	}
	switch code {
	case codeNil:
		return 0, nil
	case codeUint8:
		return c.uintN(1)
	case codeUint16:
		return c.uintN(2)
	case codeUint32:
		return c.uintN(4)
	case codeUint64, codeInt64:
		return c.uintN(8)
	case codeInt8:
		u, err := c.uintN(1)
		return uint64(int64(int8(u))), err
	case codeInt16:
		u, err := c.uintN(2)
		return uint64(int64(int16(u))), err
	case codeInt32:
		u, err := c.uintN(4)
		return uint64(int64(int32(u))), err
	}
	return 0, fmt.Errorf("code %#x where an integer was expected", code)
}

// length consumes the n-byte length of a str, bin, array, map or ext.
func (c *cursor) length(n int) (int, error) {
	u, err := c.uintN(n)
	return int(u), err
}

// arrayHeader consumes an array header and returns its element count, or
// -1 for nil.
func (c *cursor) arrayHeader() (int, error) {
	code, err := c.next()
	if err != nil {
		return 0, err
	}
	switch {
	case code >= codeFixArrLow && code <= codeFixArrHigh:
		return int(code & 0x0f), nil
	case code == codeArray16:
		return c.length(2)
	case code == codeArray32:
		return c.length(4)
	case code == codeNil:
		return -1, nil
	}
	return 0, fmt.Errorf("code %#x where an array was expected", code)
}

// mapHeader consumes a map header and returns its entry count, or -1 for
// nil.
func (c *cursor) mapHeader() (int, error) {
	code, err := c.next()
	if err != nil {
		return 0, err
	}
	switch {
	case code >= codeFixMapLow && code <= codeFixMapHigh:
		return int(code & 0x0f), nil
	case code == codeMap16:
		return c.length(2)
	case code == codeMap32:
		return c.length(4)
	case code == codeNil:
		return -1, nil
	}
	return 0, fmt.Errorf("code %#x where a map was expected", code)
}

// strBytes consumes a str (or, with bin, a bin) value and returns its
// bytes, not copied.
func (c *cursor) strBytes(bin bool) ([]byte, error) {
	code, err := c.next()
	if err != nil {
		return nil, err
	}
	n := -1
	switch {
	case bin:
		switch code {
		case codeBin8:
			n, err = c.length(1)
		case codeBin16:
			n, err = c.length(2)
		case codeBin32:
			n, err = c.length(4)
		}
	case code >= codeFixStrLow && code <= codeFixStrHigh:
		n = int(code & 0x1f)
	case code == codeStr8:
		n, err = c.length(1)
	case code == codeStr16:
		n, err = c.length(2)
	case code == codeStr32:
		n, err = c.length(4)
	}
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("code %#x where a string was expected", code)
	}
	return c.take(n)
}

// extHeader consumes an extension header and returns its id and the
// length of its data.
func (c *cursor) extHeader() (id int8, n int, err error) {
	code, err := c.next()
	if err != nil {
		return 0, 0, err
	}
	switch {
	case code >= codeFixExt1 && code <= codeFixExt16:
		n = 1 << (code - codeFixExt1) // 1, 2, 4, 8, 16
	case code == codeExt8:
		n, err = c.length(1)
	case code == codeExt16:
		n, err = c.length(2)
	case code == codeExt32:
		n, err = c.length(4)
	default:
		return 0, 0, fmt.Errorf("code %#x where an extension was expected", code)
	}
	if err != nil {
		return 0, 0, err
	}
	b, err := c.next()
	return int8(b), n, err
}

// float64 consumes a float64 value.
func (c *cursor) float64() (float64, error) {
	if code, err := c.next(); err != nil || code != codeFloat64 {
		return 0, mismatch(code, err, "float64")
	}
	u, err := c.uintN(8)
	return math.Float64frombits(u), err
}

// float32 consumes a float32 value.
func (c *cursor) float32() (float32, error) {
	if code, err := c.next(); err != nil || code != codeFloat32 {
		return 0, mismatch(code, err, "float32")
	}
	u, err := c.uintN(4)
	return math.Float32frombits(uint32(u)), err
}

// mismatch returns err, or, without one, an error for an unexpected code.
func mismatch(code byte, err error, want string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("code %#x where a %s was expected", code, want)
}
