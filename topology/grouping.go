package topology

import (
	"fmt"
	"math"
	"math/rand/v2"
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
// task.
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

// LocalOrShuffle prefers tasks in the emitter's own worker. squall runs a
// topology in one worker, so this is Shuffle.
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
}

func (f *fieldsChooser) choose(_ TaskID, values Values, dst []TaskID) []TaskID {
	h := uint64(fnvOffset)
	for _, i := range f.index {
		h = hashValue(h, values[i])
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
		if !containsTask(c.targets, t) {
			panic(fmt.Sprintf("topology: custom grouping chose task %d, which is not one of its targets %v", t, c.targets))
		}
	}
	return dst
}

func containsTask(tasks []TaskID, t TaskID) bool {
	for _, x := range tasks {
		if x == t {
			return true
		}
	}
	return false
}

// FNV-1a, used so that fields grouping is stable across processes and runs.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func hashUint(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h ^= v & 0xff
		h *= fnvPrime
		v >>= 8
	}
	return h
}

// hashValue folds v into h. Equal values hash equally; integers hash by
// value whatever their Go type, so int64(7) and int(7) group together.
func hashValue(h uint64, v any) uint64 {
	switch x := v.(type) {
	case string:
		return hashString(hashUint(h, 's'), x)
	case []byte:
		return hashString(hashUint(h, 's'), string(x))
	case int:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case int64:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case int32:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case int16:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case int8:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case uint:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case uint64:
		return hashUint(hashUint(h, 'i'), x)
	case uint32:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case uint16:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case uint8:
		return hashUint(hashUint(h, 'i'), uint64(x))
	case float64:
		return hashUint(hashUint(h, 'f'), math.Float64bits(x))
	case float32:
		return hashUint(hashUint(h, 'f'), math.Float64bits(float64(x)))
	case bool:
		if x {
			return hashUint(h, 't')
		}
		return hashUint(h, 'F')
	case nil:
		return hashUint(h, 'n')
	case fmt.Stringer:
		return hashString(hashUint(h, 'S'), x.String())
	default:
		return hashString(hashUint(h, 'v'), fmt.Sprintf("%#v", x))
	}
}
