package wire

import (
	"fmt"

	"github.com/squallstream/squall/internal/keyenc"
)

// Kind tells which map flavour wrote an envelope.
type Kind uint8

// Envelope kinds. The header byte of an envelope is
// Kind<<4 | removed<<3 | version, a positive fixint, so it costs one byte:
// three bits of kind, one bit marking a tombstone (FlagRemoved) and three
// bits of version.
const (
	KindOpaque        Kind = 1
	KindTransactional Kind = 2
	KindPlain         Kind = 3
)

// Version is the current envelope version of every kind.
const Version = 1

func (k Kind) String() string {
	switch k {
	case KindOpaque:
		return "opaque"
	case KindTransactional:
		return "transactional"
	case KindPlain:
		return "plain"
	default:
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
}

// FlagRemoved is the header bit of a tombstone: the envelope records that
// the batch of its txid removed the key (Storm's multiRemove, a write of
// null). Readers older than tombstones see an unknown version and refuse
// the value rather than misread it.
const FlagRemoved = 0x08

func header(k Kind) byte { return byte(k)<<4 | Version }

func headerOf(k Kind, removed bool) byte {
	if removed {
		return header(k) | FlagRemoved
	}
	return header(k)
}

// Opaque is the stored form of an opaque value: the txid of the batch that
// last wrote it, the current value and, when present, the previous one.
// Curr and Prev are single msgpack values, kept encoded.
//
// Layout: [header, txid, curr] or [header, txid, curr, prev]; the array
// length says whether prev is present, so a nil user value and an absent
// prev can never be confused. A removed curr (Removed, a tombstone) is
// [header|FlagRemoved, txid] or [header|FlagRemoved, txid, prev].
type Opaque struct {
	TxID    uint64
	Curr    []byte
	Prev    []byte
	HasPrev bool
	// Removed: the batch TxID removed the key; there is no Curr.
	Removed bool
}

// AppendOpaque appends the envelope of o.
func AppendOpaque(b []byte, o Opaque) []byte {
	n := 3
	if o.Removed {
		n--
	}
	if o.HasPrev {
		n++
	}
	b = keyenc.AppendArrayLen(b, n)
	b = append(b, headerOf(KindOpaque, o.Removed))
	b = keyenc.AppendUint(b, o.TxID)
	if !o.Removed {
		b = append(b, o.Curr...)
	}
	if o.HasPrev {
		b = append(b, o.Prev...)
	}
	return b
}

// ParseOpaque parses an opaque envelope. Curr and Prev alias b.
func ParseOpaque(b []byte) (Opaque, error) {
	p, n, removed, err := open(b, KindOpaque, 3, 4)
	if err != nil {
		return Opaque{}, err
	}
	o := Opaque{Removed: removed}
	if o.TxID, err = p.txid(); err != nil {
		return Opaque{}, fmt.Errorf("opaque envelope txid: %w", err)
	}
	if removed {
		n++ // no curr: count the fields as if it were there
	} else if o.Curr, err = p.raw(); err != nil {
		return Opaque{}, fmt.Errorf("opaque envelope curr: %w", err)
	}
	if n == 4 {
		o.HasPrev = true
		if o.Prev, err = p.raw(); err != nil {
			return Opaque{}, fmt.Errorf("opaque envelope prev: %w", err)
		}
	}
	return o, p.end()
}

// Transactional is the stored form of a transactional value: the txid of
// the batch that last wrote it and the value. Layout: [header, txid, val],
// or [header|FlagRemoved, txid] for a tombstone (Removed).
type Transactional struct {
	TxID uint64
	Val  []byte
	// Removed: the batch TxID removed the key; there is no Val.
	Removed bool
}

// AppendTransactional appends the envelope of t.
func AppendTransactional(b []byte, t Transactional) []byte {
	if t.Removed {
		b = keyenc.AppendArrayLen(b, 2)
		b = append(b, headerOf(KindTransactional, true))
		return keyenc.AppendUint(b, t.TxID)
	}
	b = keyenc.AppendArrayLen(b, 3)
	b = append(b, header(KindTransactional))
	b = keyenc.AppendUint(b, t.TxID)
	return append(b, t.Val...)
}

// ParseTransactional parses a transactional envelope. Val aliases b.
func ParseTransactional(b []byte) (Transactional, error) {
	p, _, removed, err := open(b, KindTransactional, 3, 3)
	if err != nil {
		return Transactional{}, err
	}
	t := Transactional{Removed: removed}
	if t.TxID, err = p.txid(); err != nil {
		return Transactional{}, fmt.Errorf("transactional envelope txid: %w", err)
	}
	if removed {
		return t, p.end()
	}
	if t.Val, err = p.raw(); err != nil {
		return Transactional{}, fmt.Errorf("transactional envelope value: %w", err)
	}
	return t, p.end()
}

// Plain is the stored form of a plain (non-transactional) value. Layout:
// [header, val], or [header|FlagRemoved] for a tombstone (Removed), which
// a non-transactional map writes only over a store that cannot delete.
type Plain struct {
	Val []byte
	// Removed: the key was removed; there is no Val.
	Removed bool
}

// AppendPlain appends the envelope of a plain value.
func AppendPlain(b []byte, v Plain) []byte {
	if v.Removed {
		b = keyenc.AppendArrayLen(b, 1)
		return append(b, headerOf(KindPlain, true))
	}
	b = keyenc.AppendArrayLen(b, 2)
	b = append(b, header(KindPlain))
	return append(b, v.Val...)
}

// ParsePlain parses a plain envelope. The value aliases b.
func ParsePlain(b []byte) (Plain, error) {
	p, _, removed, err := open(b, KindPlain, 2, 2)
	if err != nil {
		return Plain{}, err
	}
	if removed {
		return Plain{Removed: true}, p.end()
	}
	v, err := p.raw()
	if err != nil {
		return Plain{}, fmt.Errorf("plain envelope value: %w", err)
	}
	return Plain{Val: v}, p.end()
}

// parser reads an envelope's fields in place, without allocating.
type parser struct {
	b   []byte
	off int
}

// open checks the array header, its length and the kind and version byte,
// and reports whether the envelope is a tombstone. minLen and maxLen are
// the lengths of a value; a tombstone has one element less.
func open(b []byte, want Kind, minLen, maxLen int) (parser, int, bool, error) {
	p, n, removed, err := openArray(b, want)
	if err != nil {
		return p, 0, false, err
	}
	if removed {
		minLen, maxLen = minLen-1, maxLen-1
	}
	if n < minLen || n > maxLen {
		return p, 0, false, fmt.Errorf("%s envelope: array of %d elements", want, n)
	}
	return p, n, removed, nil
}

func openArray(b []byte, want Kind) (parser, int, bool, error) {
	p := parser{b: b}
	if len(b) == 0 {
		return p, 0, false, fmt.Errorf("empty %s envelope", want)
	}
	var n int
	switch c := b[0]; {
	case c >= 0x90 && c <= 0x9f:
		n, p.off = int(c&0x0f), 1
	case c == 0xdc || c == 0xdd:
		size := 2
		if c == 0xdd {
			size = 4
		}
		l, err := length(b, size)
		if err != nil {
			return p, 0, false, fmt.Errorf("%s envelope: %w", want, err)
		}
		n, p.off = l, 1+size
	default:
		return p, 0, false, fmt.Errorf("%s envelope: not an array (code %#x)", want, c)
	}
	if n < 1 || p.off >= len(b) {
		return p, 0, false, fmt.Errorf("%s envelope: no header", want)
	}
	h := b[p.off]
	if h > 0x7f {
		return p, 0, false, fmt.Errorf("%s envelope: header code %#x", want, h)
	}
	p.off++
	if got := Kind(h >> 4); got != want {
		return p, 0, false, fmt.Errorf("stored value is a %s envelope, not %s", got, want)
	}
	if v := h & 0x07; v != Version {
		return p, 0, false, fmt.Errorf("unsupported %s envelope version %d", want, v)
	}
	return p, n, h&FlagRemoved != 0, nil
}

// txid reads a txid: an integer that is not negative.
func (p *parser) txid() (uint64, error) {
	raw, err := p.raw()
	if err != nil {
		return 0, err
	}
	if raw[0] == 0xcf { // uint64 beyond int64
		var u uint64
		for _, x := range raw[1:] {
			u = u<<8 | uint64(x)
		}
		return u, nil
	}
	n, ok := ParseInt(raw)
	switch {
	case !ok:
		return 0, fmt.Errorf("not an integer (code %#x)", raw[0])
	case n < 0:
		return 0, fmt.Errorf("negative txid %d", n)
	}
	return uint64(n), nil
}

// raw returns the next value's bytes without decoding them.
func (p *parser) raw() ([]byte, error) {
	n, err := ValueLen(p.b[p.off:])
	if err != nil {
		return nil, err
	}
	v := p.b[p.off : p.off+n : p.off+n]
	p.off += n
	return v, nil
}

func (p *parser) end() error {
	if p.off != len(p.b) {
		return ErrTrailing
	}
	return nil
}
