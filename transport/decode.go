package transport

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/internal/arena"
)

// maxStreams bounds the stream names a decoder interns; names beyond it
// are allocated per message.
const maxStreams = 1024

// arenaChunk is the number of values (and anchors) allocated at once for
// the messages of a frame: 255 of 16 bytes with the allocator's 8-byte
// header fill the 4096-byte size class (256 would take 4864).
const arenaChunk = 255

// decoder decodes frame bodies, parsing the msgpack directly from the
// body (see cursor). Every length in the body is checked against the
// bytes that remain, and every allocation is charged against the frame's
// budget (see FrameBudget), before anything is allocated. It is not safe
// for concurrent use.
type decoder struct {
	c       cursor
	charged int // bytes charged for the frame being decoded
	budget  int // the frame's budget
	types   *Types
	streams map[string]string // interned stream names
	last    string            // the last stream name decoded
	strs    stringCache

	values  arena.Slices[any]    // the messages' values
	anchors arena.Slices[Anchor] // the messages' anchors
	// valueChunks and anchorChunks follow the arenas, to charge their
	// chunks.
	valueChunks, anchorChunks chunkMeter
}

func newDecoder(types *Types) *decoder {
	return &decoder{types: types, streams: map[string]string{}, strs: newStringCache(),
		values: arena.Slices[any]{Chunk: arenaChunk}, anchors: arena.Slices[Anchor]{Chunk: arenaChunk}}
}

var errTrailing = errors.New("bytes after the last message")

// frame decodes the body of one frame and appends its messages to out.
// The messages' Values and Anchors are fresh memory; out's own backing
// array is the caller's. Afterwards d.charged holds what the frame was
// charged, at most FrameBudget(len(body)).
func (d *decoder) frame(body []byte, out []Message) ([]Message, error) {
	d.c.reset(body)
	d.charged, d.budget = 0, FrameBudget(len(body))
	n, err := d.arrayLen(3) // a message takes at least 3 bytes
	if err == nil {
		err = d.charge(costAlloc(n * costMessage))
	}
	if err != nil {
		return out, frameError(len(body), err, "message count")
	}
	out = slices.Grow(out, n)
	for i := range n {
		// Decoded in place: copying a Message costs write barriers while
		// the GC runs.
		out = out[:len(out)+1]
		m := &out[len(out)-1]
		*m = Message{}
		if err := d.message(m); err != nil {
			*m = Message{}
			return out[:len(out)-1], frameError(len(body), err, fmt.Sprintf("message %d of %d", i, n))
		}
	}
	if d.c.left() != 0 {
		return out, badFrame(len(body), "%v: %d", errTrailing, d.c.left())
	}
	return out, nil
}

// charge takes n bytes from the frame's budget: called before they are
// allocated.
func (d *decoder) charge(n int) error {
	d.charged += n
	if d.charged > d.budget {
		return d.overBudget()
	}
	return nil
}

// overBudget returns the error of a frame over its budget; apart from
// charge, so that charge inlines.
func (d *decoder) overBudget() error {
	return fmt.Errorf("%w: %d bytes charged, the budget is %d", ErrOverBudget, d.charged, d.budget)
}

func (d *decoder) message(m *Message) error {
	n, err := d.arrayLen(1)
	if err != nil {
		return err
	}
	k, err := d.c.integer()
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
		root, err = d.c.integer()
		m.Root = RootID(root)
	case KindOutcome:
		var root, status uint64
		root, err = d.c.integer()
		if err == nil {
			status, err = d.c.integer()
		}
		if err == nil && status > math.MaxUint8 {
			err = fmt.Errorf("status %d", status)
		}
		m.Root, m.Status = RootID(root), acker.Status(status)
	}
	return err
}

func (d *decoder) tuple(m *Message) error {
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
		if err := d.charge(d.anchorChunks.take(na / 2)); err != nil {
			return err
		}
		m.Anchors = d.anchors.Take(na / 2)
		for i := range m.Anchors {
			root, err := d.c.integer()
			if err != nil {
				return err
			}
			edge, err := d.c.integer()
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
	if err := d.charge(d.valueChunks.take(nv)); err != nil {
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

func (d *decoder) rootAndXOR() (RootID, uint64, error) {
	root, err := d.c.integer()
	if err != nil {
		return 0, 0, err
	}
	xor, err := d.c.integer()
	return RootID(root), xor, err
}

func (d *decoder) task() (TaskID, error) {
	u, err := d.c.integer()
	if err != nil {
		return 0, err
	}
	if n := int64(u); n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("task %d out of range", n)
	}
	return TaskID(int64(u)), nil
}

// arrayLen decodes an array header of n elements and checks that the
// rest of the body can hold n elements of at least min bytes each.
func (d *decoder) arrayLen(min int) (int, error) {
	n, err := d.c.arrayHeader()
	if err != nil {
		return 0, err
	}
	if n < 0 || n*min > d.c.left() { // n < 2^32: no overflow
		return 0, fmt.Errorf("array of %d elements in %d bytes", n, d.c.left())
	}
	return n, nil
}

// stream decodes a stream name, interned. It is charged as if it were
// allocated, interned or not.
func (d *decoder) stream() (string, error) {
	b, err := d.c.strBytes(false)
	if err != nil {
		return "", err
	}
	if err := d.charge(costAlloc(len(b))); err != nil {
		return "", err
	}
	if string(b) == d.last { // most messages of a frame share a stream
		return d.last, nil
	}
	if s, ok := d.streams[string(b)]; ok {
		d.last = s
		return s, nil
	}
	s := string(b)
	d.last = s
	if len(d.streams) < maxStreams {
		d.streams[s] = s
	}
	return s, nil
}
