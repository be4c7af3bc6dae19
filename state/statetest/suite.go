package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
)

// NewMap returns a new, empty backing map for one subtest. It registers
// any cleanup (closing the map, removing files) with t.Cleanup.
type NewMap func(t *testing.T) state.BackingMap[[]byte]

// TestBackingMap runs the conformance suite against the maps newMap makes.
// Each subtest gets a fresh map. The concurrency subtest runs only if the
// map reports state.IsConcurrent.
func TestBackingMap(t *testing.T, newMap NewMap) {
	t.Run("EmptyGet", func(t *testing.T) { testEmptyGet(t, newMap(t)) })
	t.Run("EmptyCalls", func(t *testing.T) { testEmptyCalls(t, newMap(t)) })
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newMap(t)) })
	t.Run("CompositeKeys", func(t *testing.T) { testCompositeKeys(t, newMap(t)) })
	t.Run("AbsentVsPresent", func(t *testing.T) { testAbsentVsPresent(t, newMap(t)) })
	t.Run("Overwrite", func(t *testing.T) { testOverwrite(t, newMap(t)) })
	t.Run("DuplicateKeys", func(t *testing.T) { testDuplicateKeys(t, newMap(t)) })
	t.Run("ManyKeys", func(t *testing.T) { testManyKeys(t, newMap(t)) })
	t.Run("LengthMismatch", func(t *testing.T) { testLengthMismatch(t, newMap(t)) })
	t.Run("ContextCancelled", func(t *testing.T) { testContextCancelled(t, newMap(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newMap(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, newMap(t)) })
	t.Run("OpaqueMapTable", func(t *testing.T) { TestOpaqueMapTable(t, newMap(t)) })
	t.Run("TransactionalMapTable", func(t *testing.T) { TestTransactionalMapTable(t, newMap(t)) })
	t.Run("NonTransactionalMapTable", func(t *testing.T) { TestNonTransactionalMapTable(t, newMap(t)) })
	t.Run("OpaqueRemoveTable", func(t *testing.T) { TestOpaqueRemoveTable(t, newMap(t)) })
	t.Run("TransactionalRemoveTable", func(t *testing.T) { TestTransactionalRemoveTable(t, newMap(t)) })
	t.Run("NonTransactionalRemoveTable", func(t *testing.T) { TestNonTransactionalRemoveTable(t, newMap(t)) })
	t.Run("OpaqueModel", func(t *testing.T) { TestOpaqueModel(t, newMap(t)) })
	t.Run("TransactionalModel", func(t *testing.T) { TestTransactionalModel(t, newMap(t)) })
}

func get(t *testing.T, m state.BackingMap[[]byte], keys ...state.Key) []state.Entry[[]byte] {
	t.Helper()
	es, err := m.MultiGet(context.Background(), keys)
	if err != nil {
		t.Fatalf("MultiGet(%v): %v", keys, err)
	}
	if len(es) != len(keys) {
		t.Fatalf("MultiGet of %d keys returned %d entries", len(keys), len(es))
	}
	return es
}

func put(t *testing.T, m state.BackingMap[[]byte], keys []state.Key, vals ...[]byte) {
	t.Helper()
	if err := m.MultiPut(context.Background(), keys, vals); err != nil {
		t.Fatalf("MultiPut(%v): %v", keys, err)
	}
}

func keysOf(vals ...any) []state.Key {
	ks := make([]state.Key, len(vals))
	for i, v := range vals {
		ks[i] = state.MustKey(v)
	}
	return ks
}

// expect checks one entry.
func expect(t *testing.T, what string, e state.Entry[[]byte], want []byte, found bool) {
	t.Helper()
	switch {
	case e.Found != found:
		t.Errorf("%s: found = %v, want %v", what, e.Found, found)
	case found && !bytes.Equal(e.Val, want):
		t.Errorf("%s: value = %q, want %q", what, e.Val, want)
	}
}

func testEmptyGet(t *testing.T, m state.BackingMap[[]byte]) {
	for i, e := range get(t, m, keysOf("a", "b", 3)...) {
		expect(t, fmt.Sprint("key ", i), e, nil, false)
	}
}

func testEmptyCalls(t *testing.T, m state.BackingMap[[]byte]) {
	if es := get(t, m); len(es) != 0 {
		t.Errorf("MultiGet of no keys returned %d entries", len(es))
	}
	put(t, m, nil)
	put(t, m, []state.Key{})
}

func testRoundTrip(t *testing.T, m state.BackingMap[[]byte]) {
	put(t, m, keysOf("a", "b", "c"), []byte("1"), []byte("2"), []byte("3"))
	es := get(t, m, keysOf("c", "x", "a", "b")...)
	expect(t, "c", es[0], []byte("3"), true)
	expect(t, "x", es[1], nil, false)
	expect(t, "a", es[2], []byte("1"), true)
	expect(t, "b", es[3], []byte("2"), true)
	// Binary values survive unchanged.
	bin := []byte{0, 0xff, 0xc0, '\n', 0}
	put(t, m, keysOf("bin"), bin)
	expect(t, "bin", get(t, m, keysOf("bin")...)[0], bin, true)
}

func testCompositeKeys(t *testing.T, m state.BackingMap[[]byte]) {
	keys := []state.Key{
		state.MustKey("a", 1),
		state.MustKey("a", 2),
		state.MustKey("a", "1"),
		state.MustKey(1, "a"),
		state.MustKey("a"),
		state.MustKey("a", 1, nil),
		state.MustKey([]byte("a"), 1),
		state.MustKey("a", 1.0),
		state.MustKey(),
	}
	vals := make([][]byte, len(keys))
	for i := range keys {
		vals[i] = fmt.Appendf(nil, "v%d", i)
	}
	put(t, m, keys, vals...)
	es := get(t, m, keys...)
	for i := range keys {
		expect(t, keys[i].String(), es[i], vals[i], true)
	}
	// The same group-by values with other integer types are the same key.
	same := get(t, m, state.MustKey("a", int64(1)), state.MustKey("a", uint8(1)))
	expect(t, "(a, int64 1)", same[0], vals[0], true)
	expect(t, "(a, uint8 1)", same[1], vals[0], true)
	// A prefix or extension of a stored key is another key.
	for _, k := range []state.Key{state.MustKey("a", 1, 2), state.MustKey(1)} {
		expect(t, k.String(), get(t, m, k)[0], nil, false)
	}
}

func testAbsentVsPresent(t *testing.T, m state.BackingMap[[]byte]) {
	put(t, m, keysOf("nil", "empty"), nil, []byte{})
	es := get(t, m, keysOf("nil", "empty", "never")...)
	expect(t, "nil value", es[0], []byte{}, true)
	expect(t, "empty value", es[1], []byte{}, true)
	expect(t, "never written", es[2], nil, false)
}

func testOverwrite(t *testing.T, m state.BackingMap[[]byte]) {
	put(t, m, keysOf("a", "b"), []byte("1"), []byte("2"))
	put(t, m, keysOf("a"), []byte("one, again"))
	es := get(t, m, keysOf("a", "b")...)
	expect(t, "overwritten", es[0], []byte("one, again"), true)
	expect(t, "untouched", es[1], []byte("2"), true)
	put(t, m, keysOf("b"), []byte{})
	expect(t, "overwritten with empty", get(t, m, keysOf("b")...)[0], []byte{}, true)
}

func testDuplicateKeys(t *testing.T, m state.BackingMap[[]byte]) {
	put(t, m, keysOf("a", "a"), []byte("first"), []byte("last"))
	es := get(t, m, keysOf("a", "b", "a")...)
	expect(t, "last put wins", es[0], []byte("last"), true)
	expect(t, "absent between", es[1], nil, false)
	expect(t, "repeated get", es[2], []byte("last"), true)
}

func testManyKeys(t *testing.T, m state.BackingMap[[]byte]) {
	const n = 5000
	keys := make([]state.Key, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i] = state.MustKey("many", i%7, i)
		vals[i] = fmt.Appendf(nil, "value-%d", i*i)
	}
	put(t, m, keys, vals...)
	rev := make([]state.Key, n)
	for i := range keys {
		rev[n-1-i] = keys[i]
	}
	es := get(t, m, rev...)
	for i := range es {
		j := n - 1 - i
		if !es[i].Found || !bytes.Equal(es[i].Val, vals[j]) {
			t.Fatalf("key %v = %+v, want %q", keys[j], es[i], vals[j])
		}
	}
}

func testLengthMismatch(t *testing.T, m state.BackingMap[[]byte]) {
	err := m.MultiPut(context.Background(), keysOf("a", "b"), [][]byte{[]byte("1")})
	if !errors.Is(err, state.ErrLength) {
		t.Errorf("MultiPut with 2 keys and 1 value: %v, want state.ErrLength", err)
	}
}

func testContextCancelled(t *testing.T, m state.BackingMap[[]byte]) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.MultiGet(ctx, keysOf("a")); !errors.Is(err, context.Canceled) || !failure.IsRetryable(err) {
		t.Errorf("MultiGet with a cancelled context: %v, want a retryable error wrapping context.Canceled", err)
	}
	err := m.MultiPut(ctx, keysOf("a"), [][]byte{[]byte("1")})
	if !errors.Is(err, context.Canceled) || !failure.IsRetryable(err) {
		t.Errorf("MultiPut with a cancelled context: %v, want a retryable error wrapping context.Canceled", err)
	}
	// Nothing was written, and the map still works.
	expect(t, "after cancelled put", get(t, m, keysOf("a")...)[0], nil, false)
	put(t, m, keysOf("a"), []byte("1"))
	expect(t, "after cancellation", get(t, m, keysOf("a")...)[0], []byte("1"), true)
}

func testConcurrent(t *testing.T, m state.BackingMap[[]byte]) {
	if !state.IsConcurrent(m) {
		t.Skip("the map does not claim to be safe for concurrent use")
	}
	const workers, rounds, perRound = 8, 20, 10
	ctx := context.Background()
	shared := keysOf("shared-0", "shared-1")
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				keys := make([]state.Key, 0, perRound+len(shared))
				vals := make([][]byte, 0, perRound+len(shared))
				for i := range perRound {
					keys = append(keys, state.MustKey("worker", w, r, i))
					vals = append(vals, fmt.Appendf(nil, "%d/%d/%d", w, r, i))
				}
				for _, k := range shared {
					keys = append(keys, k)
					vals = append(vals, fmt.Appendf(nil, "w%d", w))
				}
				if err := m.MultiPut(ctx, keys, vals); err != nil {
					errs <- err
					return
				}
				es, err := m.MultiGet(ctx, keys)
				if err != nil {
					errs <- err
					return
				}
				for i := range perRound {
					if !es[i].Found || !bytes.Equal(es[i].Val, vals[i]) {
						errs <- fmt.Errorf("worker %d round %d: key %v = %+v, want %q", w, r, keys[i], es[i], vals[i])
						return
					}
				}
				for _, e := range es[perRound:] {
					if !e.Found || !bytes.HasPrefix(e.Val, []byte("w")) {
						errs <- fmt.Errorf("worker %d: shared key = %+v", w, e)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// All keys of all workers are there.
	var all []state.Key
	for w := range workers {
		for r := range rounds {
			for i := range perRound {
				all = append(all, state.MustKey("worker", w, r, i))
			}
		}
	}
	for i, e := range get(t, m, all...) {
		if !e.Found {
			t.Fatalf("key %v lost", all[i])
		}
	}
}
