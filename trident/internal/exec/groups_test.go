package exec

import (
	"fmt"
	"testing"

	"github.com/squallstream/squall/internal/arena"
	"github.com/squallstream/squall/state"
)

// indexOf wraps a GroupIndex of groups named after their state keys, and
// counts the groups it made.
type indexOf struct {
	t     *testing.T
	gi    GroupIndex[string]
	made  int
	given bool // a one-string key is looked up by FindString
}

func newIndexOf(t *testing.T) *indexOf {
	return &indexOf{t: t, gi: NewGroupIndex[string]()}
}

func (x *indexOf) find(values ...any) *string {
	x.t.Helper()
	idx := make([]int, len(values))
	for i := range idx {
		idx[i] = i
	}
	return x.findAt(values, idx)
}

func (x *indexOf) findAt(values []any, idx []int) *string {
	x.t.Helper()
	before := x.made
	create := func(group []any, key state.Key) (*string, error) {
		x.made++
		s := key.String()
		return &s, nil
	}
	var g *string
	var created bool
	var err error
	if s, ok := values[idx[0]].(string); ok && x.given && len(idx) == 1 {
		g, created, err = x.gi.FindString(s, values, idx, create)
	} else {
		g, created, err = x.gi.Find(values, idx, create)
	}
	if err != nil {
		x.t.Fatal(err)
	}
	if created != (x.made > before) || len(x.gi.Order) != x.made {
		x.t.Fatalf("created = %v for %v", created, values)
	}
	return g
}

func TestGroupIndex(t *testing.T) {
	x := newIndexOf(t)
	a, b := x.find("5"), x.find("5")
	if a != b || x.made != 1 {
		t.Fatalf("the same word made %d groups", x.made)
	}
	// int 5 and int64 5 have one state key: one group, whichever comes first.
	i, i64 := x.find(5), x.find(int64(5))
	if i != i64 || i == a || x.made != 2 {
		t.Fatalf("int and int64 5: groups %p %p (string %p), %d made; want one group apart from \"5\"", i, i64, a, x.made)
	}
	if x.find(int64(5)) != i || len(x.gi.Order) != 2 {
		t.Fatalf("order %d groups, want 2", len(x.gi.Order))
	}
	// A key of two values goes through its encoding.
	g2, _, err := x.gi.Find([]any{"r", int64(1)}, []int{0, 1}, func([]any, state.Key) (*string, error) { s := "pair"; return &s, nil })
	if err != nil || *g2 != "pair" || len(x.gi.Order) != 3 {
		t.Fatalf("pair: %v %v, %d groups", g2, err, len(x.gi.Order))
	}
}

// TestGroupIndexMeetsByEncoding: scalars of different types are one group
// exactly when their state keys are equal, whichever type comes first and
// however often each comes back.
func TestGroupIndexMeetsByEncoding(t *testing.T) {
	values := []any{
		5, int8(5), int16(5), int32(5), int64(5), uint(5), uint8(5), uint16(5), uint32(5), uint64(5),
		-5, int8(-5), int64(-5), 300, uint16(300), int64(300), 1 << 40, uint64(1 << 40),
		"5", true, false, 5.0, float32(5), []byte("5"),
	}
	for first := range values {
		x := newIndexOf(t)
		order := append([]any{values[first]}, values...)
		order = append(order, values...) // second time round: from the maps
		for _, v := range order {
			g := x.find(v)
			if want := state.MustKey(v).String(); *g != want {
				t.Fatalf("starting with %T %v: %T %v is in group %s, want %s", values[first], values[first], v, v, *g, want)
			}
		}
		keys := map[string]bool{}
		for _, v := range values {
			keys[state.MustKey(v).Encoded()] = true
		}
		if x.made != len(keys) {
			t.Fatalf("starting with %T %v: %d groups, want %d", values[first], values[first], x.made, len(keys))
		}
	}
}

// TestGroupIndexStringCache: with the cache in front of the string map,
// each word finds its own group, also words that share a slot (same
// length, first, middle and last bytes) and words passed in a reused
// string header, as a borrowed tuple's are; by Find and by FindString,
// given the string.
func TestGroupIndexStringCache(t *testing.T) {
	for _, given := range []bool{false, true} {
		t.Run(fmt.Sprintf("given %v", given), func(t *testing.T) { testStringCache(t, given) })
	}
}

func testStringCache(t *testing.T, given bool) {
	words := []string{"caat", "cbat", "ccat", "cdat"} // one slot
	for i := range 60 {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	x := newIndexOf(t)
	x.given = given
	var slot arena.Slot // one header, rewritten for every word
	groups := map[string]*string{}
	for round := range 50 {
		for i, w := range words {
			if round%2 == 1 { // also in another order
				w = words[len(words)-1-i]
			}
			v := []any{slot.Box(w)}
			g := x.findAt(v, []int{0})
			if want := state.MustKey(w).String(); *g != want {
				t.Fatalf("round %d: %q is in group %s", round, w, *g)
			}
			if groups[w] == nil {
				groups[w] = g
			} else if groups[w] != g {
				t.Fatalf("round %d: %q found a second group", round, w)
			}
		}
	}
	if x.made != len(words) {
		t.Fatalf("%d groups for %d words", x.made, len(words))
	}
	r := &x.gi.recent
	if r.off || len(r.slots) < recentPerKey*len(words) {
		t.Fatalf("cache of %d slots (off %v) for %d words", len(r.slots), r.off, len(words))
	}
	if r.hits == 0 {
		t.Fatal("the cache never hit")
	}
	if recentSlotOf("caat", r.shift) != recentSlotOf("cdat", r.shift) {
		t.Fatal("caat and cdat no longer share a slot: pick other words")
	}
}

// TestGroupIndexCacheOffWhenMissing: a cache that keeps missing (every
// key new) switches itself off; the index still finds every group.
func TestGroupIndexCacheOffWhenMissing(t *testing.T) {
	for _, given := range []bool{false, true} {
		t.Run(fmt.Sprintf("given %v", given), func(t *testing.T) { testCacheOff(t, given) })
	}
}

func testCacheOff(t *testing.T, given bool) {
	x := newIndexOf(t)
	x.given = given
	n := 3 * recentRound
	for i := range n {
		x.find(fmt.Sprintf("k%06d", i))
	}
	if !x.gi.recent.off || len(x.gi.recent.slots) != 1 {
		t.Fatalf("after %d new keys the cache is on (%d slots)", n, len(x.gi.recent.slots))
	}
	for i := range n {
		if g := x.find(fmt.Sprintf("k%06d", i)); *g != state.MustKey(fmt.Sprintf("k%06d", i)).String() {
			t.Fatalf("key %d in group %s", i, *g)
		}
	}
	if x.made != n {
		t.Fatalf("%d groups for %d keys", x.made, n)
	}
}

// TestGroupIndexFindAllocatesNothing: finding a group seen before
// allocates nothing, for a string (through the cache or the map) and for
// an integer.
func TestGroupIndexFindAllocatesNothing(t *testing.T) {
	x := newIndexOf(t)
	var vals [][]any
	for i := range 40 {
		vals = append(vals, []any{fmt.Sprint("w", i)}, []any{int64(i)})
	}
	for _, v := range vals {
		x.find(v...)
	}
	idx := []int{0}
	allocs := testing.AllocsPerRun(100, func() {
		for _, v := range vals {
			x.findAt(v, idx)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per round", allocs)
	}
}

// benchWords are the 42 words of the word count's five sentences.
var benchWords = []string{
	"the", "cow", "jumped", "over", "the", "moon",
	"an", "apple", "a", "day", "keeps", "the", "doctor", "away",
	"four", "score", "and", "seven", "years", "ago", "our", "fathers", "brought", "forth",
	"snow", "white", "and", "the", "seven", "dwarfs", "went", "to", "work",
	"i", "am", "at", "two", "with", "nature", "said", "the", "poet",
}

func benchmarkFind(b *testing.B, words []string) {
	gi := NewGroupIndex[int]()
	vals := make([][]any, len(words))
	for i, w := range words {
		vals[i] = []any{w}
	}
	idx := []int{0}
	create := func([]any, state.Key) (*int, error) { return new(int), nil }
	b.ResetTimer()
	for i := range b.N {
		g, _, _ := gi.Find(vals[i%len(vals)], idx, create)
		*g++
	}
}

// BenchmarkGroupIndexFind finds the word count's words, one op a word.
func BenchmarkGroupIndexFind(b *testing.B) { benchmarkFind(b, benchWords) }

// BenchmarkGroupIndexFindMany finds 100,000 distinct words, one op a word.
func BenchmarkGroupIndexFindMany(b *testing.B) {
	words := make([]string, 100_000)
	for i := range words {
		words[i] = fmt.Sprintf("word%d", i*7919%100_000)
	}
	benchmarkFind(b, words)
}

// TestGroupIndexReset: a reset index finds none of the groups it held,
// by any path (the cache of recent strings, the maps by string, integer
// and other scalar, the state keys), keeps the cache it grew to, and a
// cache that had switched itself off is on again.
func TestGroupIndexReset(t *testing.T) {
	for _, given := range []bool{false, true} {
		t.Run(fmt.Sprintf("given %v", given), func(t *testing.T) {
			x := newIndexOf(t)
			x.given = given
			keys := [][]any{{int64(7)}, {uint8(3)}, {"a", 1}}
			for i := range 40 {
				keys = append(keys, []any{fmt.Sprint("w", i)})
			}
			for range 2 {
				for _, k := range keys {
					x.find(k...)
				}
			}
			slots := len(x.gi.recent.slots)
			x.gi.Reset()
			x.made = 0
			if len(x.gi.Order) != 0 || len(x.gi.recent.slots) != slots {
				t.Fatalf("after Reset: %d groups, %d cache slots (had %d)", len(x.gi.Order), len(x.gi.recent.slots), slots)
			}
			for _, k := range keys {
				before := x.made
				x.find(k...)
				if x.made != before+1 {
					t.Fatalf("after Reset, %v found a group of before", k)
				}
			}
		})
	}
	x := newIndexOf(t)
	for i := range 3 * recentRound {
		x.find(fmt.Sprintf("k%06d", i))
	}
	if !x.gi.recent.off {
		t.Fatal("the cache did not switch itself off")
	}
	x.gi.Reset()
	if x.gi.recent.off || len(x.gi.recent.slots) != 1 {
		t.Fatalf("after Reset the cache is off %v with %d slots", x.gi.recent.off, len(x.gi.recent.slots))
	}
}
