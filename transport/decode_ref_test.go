package transport

// The msgpack-library decoder the hand-written one replaced, kept here as
// the reference for the differential fuzz test: both must accept the same
// frames and decode them to the same messages.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/internal/arena"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// refDecoder is the former decoder, over msgpack.Decoder. Every length in the body is checked
// against the bytes that remain before anything is allocated, so a frame
// of n bytes never makes the decoder allocate much more than n. It is not
// safe for concurrent use.
type refDecoder struct {
	body    []byte
	r       bytes.Reader
	dec     *msgpack.Decoder
	types   *Types
	streams map[string]string // interned stream names

	values  arena.Slices[any]
	anchors arena.Slices[Anchor]
}

func newRefDecoder(types *Types) *refDecoder {
	d := &refDecoder{types: types, streams: map[string]string{}}
	d.dec = msgpack.NewDecoder(&d.r)
	return d
}

// frame decodes the body of one frame and appends its messages to out.
// The messages' Values and Anchors are fresh memory; out's own backing
// array is the caller's.
func (d *refDecoder) frame(body []byte, out []Message) ([]Message, error) {
	d.body = body
	d.r.Reset(body)
	d.dec.Reset(&d.r)
	n, err := d.arrayLen(3) // a message takes at least 3 bytes
	if err != nil {
		return out, badFrame(len(body), "message count: %v", err)
	}
	for i := range n {
		var m Message
		if err := d.message(&m); err != nil {
			return out, badFrame(len(body), "message %d of %d: %v", i, n, err)
		}
		out = append(out, m)
	}
	if d.r.Len() != 0 {
		return out, badFrame(len(body), "%v: %d", errTrailing, d.r.Len())
	}
	return out, nil
}

func (d *refDecoder) message(m *Message) error {
	n, err := d.arrayLen(1)
	if err != nil {
		return err
	}
	k, err := d.dec.DecodeUint64()
	if err != nil {
		return err
	}
	m.Kind = Kind(k)
	if want := fieldCount(m.Kind); k >= uint64(kindEnd) || want == 0 || want != n {
		return fmt.Errorf("%v with %d fields", m.Kind, n)
	}
	if m.Task, err = d.task(); err != nil {
		return err
	}
	switch m.Kind {
	case KindTuple:
		return d.tuple(m)
	case KindInit:
		m.Root, m.XOR, err = d.rootAndXOR()
		if err == nil {
			m.Source, err = d.task()
		}
	case KindAck:
		m.Root, m.XOR, err = d.rootAndXOR()
	case KindFail, KindReset:
		var root uint64
		root, err = d.dec.DecodeUint64()
		m.Root = RootID(root)
	case KindOutcome:
		var root, status uint64
		root, err = d.dec.DecodeUint64()
		if err == nil {
			status, err = d.dec.DecodeUint64()
		}
		if err == nil && status > math.MaxUint8 {
			err = fmt.Errorf("status %d", status)
		}
		m.Root, m.Status = RootID(root), acker.Status(status)
	}
	return err
}

func (d *refDecoder) tuple(m *Message) error {
	var err error
	if m.Stream, err = d.stream(); err != nil {
		return err
	}
	if m.Source, err = d.task(); err != nil {
		return err
	}
	na, err := d.arrayLen(1)
	if err != nil {
		return err
	}
	if na%2 != 0 {
		return fmt.Errorf("odd anchor array of %d", na)
	}
	if na > 0 {
		m.Anchors = d.anchors.Take(na / 2)
		for i := range m.Anchors {
			root, err := d.dec.DecodeUint64()
			if err != nil {
				return err
			}
			edge, err := d.dec.DecodeUint64()
			if err != nil {
				return err
			}
			m.Anchors[i] = Anchor{Root: RootID(root), Edge: edge}
		}
	}
	nv, err := d.arrayLen(1)
	if err != nil {
		return err
	}
	m.Values = d.values.Take(nv)
	for i := range m.Values {
		if m.Values[i], err = d.value(1); err != nil {
			return fmt.Errorf("values[%d]: %w", i, err)
		}
	}
	return nil
}

func (d *refDecoder) rootAndXOR() (RootID, uint64, error) {
	root, err := d.dec.DecodeUint64()
	if err != nil {
		return 0, 0, err
	}
	xor, err := d.dec.DecodeUint64()
	return RootID(root), xor, err
}

func (d *refDecoder) task() (TaskID, error) {
	n, err := d.dec.DecodeInt64()
	if err != nil {
		return 0, err
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("task %d out of range", n)
	}
	return TaskID(n), nil
}

// arrayLen decodes an array header of n elements and checks that the
// rest of the body can hold n elements of at least min bytes each.
func (d *refDecoder) arrayLen(min int) (int, error) {
	n, err := d.dec.DecodeArrayLen()
	if err != nil {
		return 0, err
	}
	if n < 0 || n > d.r.Len()/min {
		return 0, fmt.Errorf("array of %d elements in %d bytes", n, d.r.Len())
	}
	return n, nil
}

// take returns the next n bytes of the body, without copying them.
func (d *refDecoder) take(n int) ([]byte, error) {
	if n < 0 || n > d.r.Len() {
		return nil, fmt.Errorf("%d bytes wanted, %d left", n, d.r.Len())
	}
	pos := len(d.body) - d.r.Len()
	d.r.Seek(int64(n), io.SeekCurrent)
	return d.body[pos : pos+n : pos+n], nil
}

// strBytes decodes the header of a str (or, with bin, a bin) value and
// returns its bytes, not copied.
func (d *refDecoder) strBytes(bin bool) ([]byte, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	if bin && !msgpcode.IsBin(c) || !bin && !msgpcode.IsString(c) {
		return nil, fmt.Errorf("code %#x where a string was expected", c)
	}
	n, err := d.dec.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

// stream decodes a stream name, interned.
func (d *refDecoder) stream() (string, error) {
	b, err := d.strBytes(false)
	if err != nil {
		return "", err
	}
	if s, ok := d.streams[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if len(d.streams) < maxStreams {
		d.streams[s] = s
	}
	return s, nil
}

// value decodes one tuple value (see the package comment for the types).
func (d *refDecoder) value(depth int) (any, error) {
	c, err := d.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedNum(c), c >= msgpcode.Uint8 && c <= msgpcode.Int64:
		n, err := d.dec.DecodeInt64()
		return int(n), err
	case msgpcode.IsString(c):
		b, err := d.strBytes(false)
		return string(b), err
	case c == msgpcode.Double:
		return d.dec.DecodeFloat64()
	case c == msgpcode.True, c == msgpcode.False:
		return d.dec.DecodeBool()
	case c == msgpcode.Nil:
		return nil, d.dec.DecodeNil()
	case msgpcode.IsBin(c):
		b, err := d.strBytes(true)
		return append([]byte{}, b...), err
	case c == msgpcode.Float:
		return d.dec.DecodeFloat32()
	case msgpcode.IsExt(c):
		return d.ext()
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		return d.array(depth)
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		return d.mapValue(depth)
	}
	return nil, fmt.Errorf("unexpected code %#x", c)
}

func (d *refDecoder) array(depth int) (any, error) {
	if depth >= maxDepth {
		return nil, errors.New("values nested too deeply")
	}
	n, err := d.arrayLen(1)
	if err != nil {
		return nil, err
	}
	a := make([]any, n)
	for i := range a {
		if a[i], err = d.value(depth + 1); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (d *refDecoder) mapValue(depth int) (any, error) {
	if depth >= maxDepth {
		return nil, errors.New("values nested too deeply")
	}
	n, err := d.dec.DecodeMapLen()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > d.r.Len()/2 {
		return nil, fmt.Errorf("map of %d entries in %d bytes", n, d.r.Len())
	}
	m := make(map[string]any, n)
	for range n {
		k, err := d.strBytes(false)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[string(k)] = v
	}
	return m, nil
}

func (d *refDecoder) ext() (any, error) {
	id, n, err := d.dec.DecodeExtHeader()
	if err != nil {
		return nil, err
	}
	data, err := d.take(n)
	if err != nil {
		return nil, err
	}
	switch id {
	case extTime:
		return decodeTime(data)
	case extSized:
		return decodeSized(data)
	}
	t := d.types.lookupID(id)
	if t == nil {
		return nil, fmt.Errorf("unknown extension %d", id)
	}
	v, err := t.dec(data)
	if err != nil {
		return nil, fmt.Errorf("extension %d (%v): %w", id, t.typ, err)
	}
	return v, nil
}
