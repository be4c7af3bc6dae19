package wire

import (
	"errors"
	"fmt"
)

// errShort reports a value cut off before its end.
var errShort = errors.New("unexpected end of msgpack data")

// maxDepth bounds nesting, so hostile input cannot exhaust the stack.
const maxDepth = 512

// ValueLen returns the length in bytes of the msgpack value at the start
// of b, without decoding it.
func ValueLen(b []byte) (int, error) { return valueLen(b, 0) }

func valueLen(b []byte, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errors.New("msgpack value nested too deeply")
	}
	if len(b) == 0 {
		return 0, errShort
	}
	c := b[0]
	switch {
	case c <= 0x7f, c >= 0xe0: // fixint
		return 1, nil
	case c <= 0x8f: // fixmap
		return elems(b, 1, 2*int(c&0x0f), depth)
	case c <= 0x9f: // fixarray
		return elems(b, 1, int(c&0x0f), depth)
	case c <= 0xbf: // fixstr
		return fixed(b, 1+int(c&0x1f))
	}
	switch c {
	case 0xc0, 0xc2, 0xc3: // nil, false, true
		return 1, nil
	case 0xcc, 0xd0:
		return fixed(b, 2)
	case 0xcd, 0xd1:
		return fixed(b, 3)
	case 0xce, 0xd2, 0xca:
		return fixed(b, 5)
	case 0xcf, 0xd3, 0xcb:
		return fixed(b, 9)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 (+ type byte)
		return fixed(b, 2+1<<(c-0xd4))
	case 0xc4, 0xd9: // bin8, str8
		return sized(b, 1, 0)
	case 0xc5, 0xda: // bin16, str16
		return sized(b, 2, 0)
	case 0xc6, 0xdb: // bin32, str32
		return sized(b, 4, 0)
	case 0xc7, 0xc8, 0xc9: // ext8, ext16, ext32 (+ type byte)
		return sized(b, 1<<(c-0xc7), 1)
	case 0xdc: // array16
		n, err := length(b, 2)
		if err != nil {
			return 0, err
		}
		return elems(b, 3, n, depth)
	case 0xdd: // array32
		n, err := length(b, 4)
		if err != nil {
			return 0, err
		}
		return elems(b, 5, n, depth)
	case 0xde: // map16
		n, err := length(b, 2)
		if err != nil {
			return 0, err
		}
		return elems(b, 3, 2*n, depth)
	case 0xdf: // map32
		n, err := length(b, 4)
		if err != nil {
			return 0, err
		}
		return elems(b, 5, 2*n, depth)
	}
	return 0, fmt.Errorf("invalid msgpack code %#x", c)
}

// fixed checks that b holds n bytes.
func fixed(b []byte, n int) (int, error) {
	if len(b) < n {
		return 0, errShort
	}
	return n, nil
}

// length reads a big-endian length of size bytes after the code byte.
func length(b []byte, size int) (int, error) {
	if len(b) < 1+size {
		return 0, errShort
	}
	n := 0
	for _, x := range b[1 : 1+size] {
		n = n<<8 | int(x)
	}
	return n, nil
}

// sized handles a code, a length of size bytes, extra bytes, then the
// payload.
func sized(b []byte, size, extra int) (int, error) {
	n, err := length(b, size)
	if err != nil {
		return 0, err
	}
	return fixed(b, 1+size+extra+n)
}

// elems measures n values after a header of hdr bytes.
func elems(b []byte, hdr, n, depth int) (int, error) {
	off := hdr
	if len(b) < off {
		return 0, errShort
	}
	for range n {
		l, err := valueLen(b[off:], depth+1)
		if err != nil {
			return 0, err
		}
		off += l
	}
	return off, nil
}
