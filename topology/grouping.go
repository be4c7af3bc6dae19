package topology

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/squallstream/squall/internal/keyenc"
)

// Grouping says which tasks of a subscribing bolt receive each tuple of a
// stream.
type Grouping struct {
	kind      groupingKind
	fields    Fields
	newCustom func() CustomGrouping
}

type groupingKind uint8

const (
	groupShuffle groupingKind = iota + 1
	groupFields
	groupAll
	groupGlobal
	groupDirect
	groupLocalOrShuffle
	groupCustom
)

// Shuffle spreads tuples evenly over the bolt's tasks.
func Shuffle() Grouping { return Grouping{kind: groupShuffle} }

// ByFields sends tuples with equal values in the named fields to the same
// task. Values are equal when they are the same state key (state.Key):
// the grouping hashes the canonical key encoding, so int(7) and int64(7),
// a named string type and the string, or one instant in two time zones
// go to the same task.
func ByFields(fields ...string) Grouping {
	return Grouping{kind: groupFields, fields: append(Fields(nil), fields...)}
}

// All sends every tuple to every task of the bolt.
func All() Grouping { return Grouping{kind: groupAll} }

// Global sends every tuple to the bolt's task with the lowest id.
func Global() Grouping { return Grouping{kind: groupGlobal} }

// Direct lets the emitter choose the task with EmitDirect. The stream must
// be declared with DirectStream.
func Direct() Grouping { return Grouping{kind: groupDirect} }

// LocalOrShuffle shuffles over the bolt's tasks in the emitter's own
// worker, or over all of them if none runs there. In one process (a
// LocalCluster) this is Shuffle; across workers (RunWorker) it keeps
// tuples off the network where it can.
func LocalOrShuffle() Grouping { return Grouping{kind: groupLocalOrShuffle} }

// Custom calls a CustomGrouping to choose tasks. newGrouping is called once
// per emitting executor so that implementations may keep state.
func Custom(newGrouping func() CustomGrouping) Grouping {
	return Grouping{kind: groupCustom, newCustom: newGrouping}
}

// CustomGrouping chooses the target tasks of each tuple.
type CustomGrouping interface {
	// Prepare receives the subscribing bolt's tasks, in increasing order.
	Prepare(targets []TaskID)
	// ChooseTasks appends the tasks that receive values to dst and returns
	// it. Every task returned must be one of the prepared targets.
	ChooseTasks(source TaskID, values Values, dst []TaskID) []TaskID
}

func (g Grouping) String() string {
	switch g.kind {
	case groupShuffle:
		return "shuffle"
	case groupFields:
		return "fields" + g.fields.String()
	case groupAll:
		return "all"
	case groupGlobal:
		return "global"
	case groupDirect:
		return "direct"
	case groupLocalOrShuffle:
		return "local-or-shuffle"
	case groupCustom:
		return "custom"
	default:
		return "invalid grouping"
	}
}

// chooser is one emitting executor's instance of a subscription's grouping.
type chooser interface {
	choose(source TaskID, values Values, dst []TaskID) []TaskID
}

func newChooser(g Grouping, targets []TaskID, fieldIndex []int, rng *rand.Rand) chooser {
	switch g.kind {
	case groupShuffle, groupLocalOrShuffle:
		return &shuffleChooser{targets: targets, next: rng.IntN(len(targets))}
	case groupFields:
		return &fieldsChooser{targets: targets, index: fieldIndex}
	case groupAll:
		return allChooser(targets)
	case groupGlobal:
		return globalChooser(targets[0])
	case groupCustom:
		c := g.newCustom()
		c.Prepare(append([]TaskID(nil), targets...))
		return &customChooser{c: c, targets: targets}
	default:
		panic(fmt.Sprintf("topology: no chooser for %v grouping", g))
	}
}

type shuffleChooser struct {
	targets []TaskID
	next    int
}

func (s *shuffleChooser) choose(_ TaskID, _ Values, dst []TaskID) []TaskID {
	t := s.targets[s.next]
	s.next++
	if s.next == len(s.targets) {
		s.next = 0
	}
	return append(dst, t)
}

type fieldsChooser struct {
	targets []TaskID
	index   []int
	buf     []byte // scratch for key encodings; one goroutine chooses
}

func (f *fieldsChooser) choose(_ TaskID, values Values, dst []TaskID) []TaskID {
	h := uint64(keyenc.HashOffset)
	for _, i := range f.index {
		h = hashValue(h, values[i], &f.buf)
	}
	return append(dst, f.targets[h%uint64(len(f.targets))])
}

type allChooser []TaskID

func (a allChooser) choose(_ TaskID, _ Values, dst []TaskID) []TaskID { return append(dst, a...) }

type globalChooser TaskID

func (g globalChooser) choose(_ TaskID, _ Values, dst []TaskID) []TaskID {
	return append(dst, TaskID(g))
}

type customChooser struct {
	c       CustomGrouping
	targets []TaskID
}

func (c *customChooser) choose(source TaskID, values Values, dst []TaskID) []TaskID {
	n := len(dst)
	dst = c.c.ChooseTasks(source, values, dst)
	for _, t := range dst[n:] {
		if !slices.Contains(c.targets, t) {
			panic(fmt.Sprintf("topology: custom grouping chose task %d, which is not one of its targets %v", t, c.targets))
		}
	}
	return dst
}

// hashValue folds the canonical key encoding of v (internal/keyenc, the
// encoding of state keys) into h, so that values that are the same state
// key hash equally: int64(7) and int(7), a named string type and the
// string, the same instant in two time zones. buf is scratch space for the
// encoding. Strings and byte slices are hashed in place, header then
// bytes, which is the hash of their encoding without copying it. A value
// that cannot be a key (a map, a function) is hashed by its Go syntax.
func hashValue(h uint64, v any, buf *[]byte) uint64 {
	var hdr [5]byte
	switch x := v.(type) {
	case string:
		return keyenc.HashString(keyenc.HashBytes(h, keyenc.AppendStringHeader(hdr[:0], len(x))), x)
	case []byte:
		return keyenc.HashBytes(keyenc.HashBytes(h, keyenc.AppendBinHeader(hdr[:0], len(x))), x)
	}
	b, err := keyenc.Append((*buf)[:0], v)
	if err != nil {
		// A marker no encoding starts with (0xff and seven zero bytes), then the Go syntax.
		return keyenc.HashString(keyenc.HashBytes(h, []byte{0xff, 0, 0, 0, 0, 0, 0, 0}), fmt.Sprintf("%#v", v))
	}
	*buf = b
	return keyenc.HashBytes(h, b)
}
