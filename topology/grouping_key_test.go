package topology

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/squallstream/squall/state"
)

// Named types, as applications declare keys.
type (
	roomID    string
	hourOfDay int16
	score     float64
	blob      []byte
	pairKey   struct{ X, Y any }
	otherPair struct{ X, Y any } // same fields: the same key as pairKey
)

// monoBase carries a monotonic clock reading.
var monoBase = time.Now()

// intAs returns n as one of the Go integer types that can hold it.
func intAs(t *rapid.T, n int64, label string) any {
	opts := []any{int(n), n}
	if n >= -1<<31 && n < 1<<31 {
		opts = append(opts, int32(n))
	}
	if n >= -1<<15 && n < 1<<15 {
		opts = append(opts, int16(n), hourOfDay(n))
	}
	if n >= -128 && n < 128 {
		opts = append(opts, int8(n))
	}
	if n >= 0 {
		opts = append(opts, uint64(n), uint(n))
		if n < 1<<32 {
			opts = append(opts, uint32(n))
		}
		if n < 1<<16 {
			opts = append(opts, uint16(n))
		}
		if n < 1<<8 {
			opts = append(opts, uint8(n))
		}
	}
	return opts[rapid.IntRange(0, len(opts)-1).Draw(t, label)]
}

// zoned returns the instant of tm in a random zone, with or without a
// monotonic clock reading.
func zoned(t *rapid.T, tm time.Time, label string) time.Time {
	switch rapid.IntRange(0, 2).Draw(t, label+" zone") {
	case 0:
		tm = tm.UTC()
	case 1:
		tm = tm.In(time.FixedZone("Z", 60*rapid.IntRange(-12*60, 14*60).Draw(t, label+" offset")))
	}
	if rapid.Bool().Draw(t, label+" strip monotonic") {
		tm = tm.Round(0)
	}
	return tm
}

// keyPair draws two Go values that are the same state key, built
// differently: integer types, named types, zones and monotonic readings,
// pointers, nested slices and structs.
func keyPair(t *rapid.T, depth int) (any, any) {
	kinds := 8
	if depth < 3 {
		kinds = 10
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		n := rapid.OneOf(rapid.Int64Range(-200, 300), rapid.Int64()).Draw(t, "int")
		return intAs(t, n, "a"), intAs(t, n, "b")
	case 1:
		s := rapid.String().Draw(t, "string")
		return s, roomID(s)
	case 2:
		// The same instant; one side may carry a monotonic reading.
		d := time.Duration(rapid.Int64Range(-1e18, 1e18).Draw(t, "offset"))
		tm := monoBase.Add(d)
		return zoned(t, tm, "a"), zoned(t, tm, "b")
	case 3:
		f := rapid.Float64().Draw(t, "float")
		return f, score(f)
	case 4:
		b := rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")
		return b, blob(b)
	case 5:
		return nil, nil
	case 6:
		v := rapid.Bool().Draw(t, "bool")
		return v, v
	case 7:
		a, b := keyPair(t, depth+1)
		return &a, b
	case 8:
		n := rapid.IntRange(0, 4).Draw(t, "len")
		as, bs := make([]any, n), make([]any, n)
		for i := range n {
			as[i], bs[i] = keyPair(t, depth+1)
		}
		return as, bs
	default:
		x1, x2 := keyPair(t, depth+1)
		y1, y2 := keyPair(t, depth+1)
		return pairKey{X: x1, Y: y1}, otherPair{X: x2, Y: y2}
	}
}

// TestFieldsGroupingFollowsKeyEquality: tuples whose grouping values are
// the same state key always go to the same task.
func TestFieldsGroupingFollowsKeyEquality(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fields := rapid.IntRange(1, 3).Draw(t, "fields")
		var as, bs Values
		index := make([]int, fields)
		for i := range fields {
			a, b := keyPair(t, 0)
			as, bs = append(as, a), append(bs, b)
			index[i] = i
		}
		ka, err := state.NewKey(as...)
		if err != nil {
			t.Fatalf("key of %#v: %v", as, err)
		}
		if kb := state.MustKey(bs...); !ka.Equal(kb) {
			t.Fatalf("generator: %#v and %#v are different keys", as, bs)
		}
		targets := make([]TaskID, rapid.IntRange(1, 16).Draw(t, "tasks"))
		for i := range targets {
			targets[i] = TaskID(i + 1)
		}
		c := newChooser(ByFields("f"), targets, index, nil)
		ta := c.choose(0, as, nil)
		tb := c.choose(0, bs, nil)
		if ta[0] != tb[0] {
			t.Fatalf("the same key %v went to tasks %d and %d: %#v and %#v", ka, ta[0], tb[0], as, bs)
		}
	})
}

// TestFieldsGroupingTimeZones is the case that lost updates: one instant
// in two zones.
func TestFieldsGroupingTimeZones(t *testing.T) {
	targets := []TaskID{1, 2, 3, 4, 5, 6, 7, 8}
	c := newChooser(ByFields("at"), targets, []int{0}, nil)
	for i := range 100 {
		at := time.Date(2026, 12, 1, i%24, i, 0, 0, time.UTC)
		paris := at.In(time.FixedZone("CET", 3600))
		if a, b := c.choose(0, Values{at}, nil)[0], c.choose(0, Values{paris}, nil)[0]; a != b {
			t.Fatalf("%v went to task %d, %v to task %d", at, a, paris, b)
		}
	}
}
