package state_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/statetest"
)

func TestLRUConformance(t *testing.T) {
	for _, size := range []int{1, 3, 10000} {
		t.Run(fmt.Sprint("size", size), func(t *testing.T) {
			statetest.TestBackingMap(t, func(*testing.T) state.BackingMap[[]byte] {
				l, err := state.NewLRU[[]byte](state.NewMemory(""), size)
				if err != nil {
					t.Fatal(err)
				}
				return l
			})
		})
	}
}

func TestLRURejectsBadSize(t *testing.T) {
	for _, n := range []int{0, -1} {
		if _, err := state.NewLRU[[]byte](state.NewMemory(""), n); err == nil {
			t.Errorf("NewLRU(size %d) succeeded", n)
		}
	}
}

func keyN(i int) state.Key { return state.MustKey("k", i) }

func keysN(from, to int) []state.Key {
	var ks []state.Key
	for i := from; i < to; i++ {
		ks = append(ks, keyN(i))
	}
	return ks
}

func valsN(from, to int) [][]byte {
	var vs [][]byte
	for i := from; i < to; i++ {
		vs = append(vs, fmt.Appendf(nil, "v%d", i))
	}
	return vs
}

func TestLRUBounds(t *testing.T) {
	ctx := context.Background()
	const size = 5
	fm := statetest.NewFaultMap[[]byte](state.NewMemory(""), nil)
	l, err := state.NewLRU[[]byte](fm, size)
	if err != nil {
		t.Fatal(err)
	}
	// 20 keys through puts and gets: never more than size entries.
	for i := range 20 {
		if err := l.MultiPut(ctx, keysN(i, i+1), valsN(i, i+1)); err != nil {
			t.Fatal(err)
		}
		if l.Len() > size {
			t.Fatalf("after %d puts Len() = %d > %d", i+1, l.Len(), size)
		}
	}
	if l.Len() != size {
		t.Fatalf("Len() = %d, want %d", l.Len(), size)
	}

	// The 5 most recently used keys are served from memory…
	gets := fm.Calls(statetest.OpGet)
	es, err := l.MultiGet(ctx, keysN(15, 20))
	if err != nil {
		t.Fatal(err)
	}
	if fm.Calls(statetest.OpGet) != gets {
		t.Error("recently used keys were read from the store")
	}
	for i, e := range es {
		if string(e.Val) != fmt.Sprintf("v%d", 15+i) {
			t.Errorf("cached key %d = %q", 15+i, e.Val)
		}
	}
	// …an evicted one goes to the store, and is then cached.
	if l.Len() != size {
		t.Fatalf("Len() = %d, want %d", l.Len(), size)
	}
	h0, m0 := l.Stats()
	if _, err := l.MultiGet(ctx, keysN(0, 1)); err != nil {
		t.Fatal(err)
	}
	if fm.Calls(statetest.OpGet) != gets+1 {
		t.Error("an evicted key was not read from the store")
	}
	if _, err := l.MultiGet(ctx, keysN(0, 1)); err != nil {
		t.Fatal(err)
	}
	if h, m := l.Stats(); h != h0+1 || m != m0+1 {
		t.Errorf("Stats() = %d hits, %d misses; want %d, %d", h, m, h0+1, m0+1)
	}
	// One read of more keys than fit keeps the bound.
	if _, err := l.MultiGet(ctx, keysN(0, 20)); err != nil {
		t.Fatal(err)
	}
	if l.Len() != size {
		t.Fatalf("after a read of 20 keys Len() = %d, want %d", l.Len(), size)
	}
	// Absent keys are cached too.
	if _, err := l.MultiGet(ctx, keysN(100, 101)); err != nil {
		t.Fatal(err)
	}
	gets = fm.Calls(statetest.OpGet)
	es, _ = l.MultiGet(ctx, keysN(100, 101))
	if es[0].Found || fm.Calls(statetest.OpGet) != gets {
		t.Errorf("absent key: %+v, store reads %d → %d", es[0], gets, fm.Calls(statetest.OpGet))
	}
}

// After a put that failed halfway, the cache must not serve either the old
// or the new values: the store holds some of each.
func TestLRUForgetsKeysOfFailedPut(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	fm := statetest.NewFaultMap[[]byte](mem, nil)
	l, _ := state.NewLRU[[]byte](fm, 100)
	if err := l.MultiPut(ctx, keysN(0, 4), valsN(0, 4)); err != nil {
		t.Fatal(err)
	}
	fm.FailNext(statetest.OpPut, statetest.Retryable(2))
	err := l.MultiPut(ctx, keysN(0, 4), [][]byte{[]byte("n0"), []byte("n1"), []byte("n2"), []byte("n3")})
	if !errors.Is(err, statetest.ErrInjected) {
		t.Fatalf("MultiPut: %v, want the injected fault", err)
	}
	es, err := l.MultiGet(ctx, keysN(0, 4))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"n0", "n1", "v2", "v3"} // what the store holds
	for i, e := range es {
		if string(e.Val) != want[i] {
			t.Errorf("key %d = %q, want %q (the store's value)", i, e.Val, want[i])
		}
	}
}

// slowGetMap delays MultiGet until released, to interleave a put.
type slowGetMap struct {
	state.BackingMap[[]byte]
	read    chan struct{} // closed once the read is done
	release chan struct{}
}

func (s *slowGetMap) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[[]byte], error) {
	es, err := s.BackingMap.MultiGet(ctx, keys)
	close(s.read)
	<-s.release
	return es, err
}

// A read that overlaps a put must not leave its (older) value in the cache.
func TestLRUNoStaleFillAfterOverlappingPut(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	if err := mem.MultiPut(ctx, keysN(0, 1), [][]byte{[]byte("old")}); err != nil {
		t.Fatal(err)
	}
	slow := &slowGetMap{BackingMap: mem, read: make(chan struct{}), release: make(chan struct{})}
	l, _ := state.NewLRU[[]byte](slow, 10)
	var wg sync.WaitGroup
	wg.Go(func() {
		es, err := l.MultiGet(ctx, keysN(0, 1))
		if err != nil || string(es[0].Val) != "old" {
			t.Errorf("overlapping get = %+v, %v", es, err)
		}
	})
	<-slow.read
	if err := l.MultiPut(ctx, keysN(0, 1), [][]byte{[]byte("new")}); err != nil {
		t.Fatal(err)
	}
	close(slow.release)
	wg.Wait()
	slow.read, slow.release = make(chan struct{}), make(chan struct{})
	close(slow.release)
	es, err := l.MultiGet(ctx, keysN(0, 1))
	if err != nil || string(es[0].Val) != "new" {
		t.Errorf("get after the put = %+v, %v; want new", es, err)
	}
}

func TestLRUForwardsOptionalInterfaces(t *testing.T) {
	l, _ := state.NewLRU[[]byte](state.NewMemory("mem-1"), 2)
	if l.Name() != "mem-1" || !state.IsConcurrent(l) {
		t.Errorf("Name() = %q, IsConcurrent = %v", l.Name(), state.IsConcurrent(l))
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}
