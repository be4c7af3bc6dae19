package ops_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"testing"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/state/nontransactional"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/txn"
)

// notListable is a backing map that cannot list its keys (as Cassandra's).
type notListable struct{ state.BackingMap[[]byte] }

// TestTupleCollectionGetOnMapState: TupleCollectionGet reads the map
// state a PersistentAggregate holds directly, whatever its flavour and
// its listing backing map (memory, bbolt, under an LRU), with Storm's
// rows: each key's values and its current value, a removed key left out,
// a key written by a later batch read as of that batch.
func TestTupleCollectionGetOnMapState(t *testing.T) {
	flavours := map[string]func(state.BackingMap[[]byte]) state.MapState[int64]{
		"opaque": func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return opaque.New[int64](m, state.MapOptions[int64]{Name: "counts"})
		},
		"transactional": func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return transactional.New[int64](m, state.MapOptions[int64]{Name: "counts"})
		},
		"nontransactional": func(m state.BackingMap[[]byte]) state.MapState[int64] {
			return nontransactional.New[int64](m, state.MapOptions[int64]{Name: "counts"})
		},
	}
	backings := map[string]func(t *testing.T) state.BackingMap[[]byte]{
		"memory": func(*testing.T) state.BackingMap[[]byte] { return state.NewMemory("counts") },
		"bolt": func(t *testing.T) state.BackingMap[[]byte] {
			m, err := bolt.Open(filepath.Join(t.TempDir(), "counts.db"), bolt.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			return m
		},
		"lru": func(*testing.T) state.BackingMap[[]byte] {
			l, err := state.NewLRU[[]byte](state.NewMemory("counts"), 4)
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
	}
	// Storm's word count after "the cow jumped over the moon" (txid 1),
	// then txid 2 adds "the" once more and removes "over".
	want := []string{"[cow 1]", "[jumped 1]", "[moon 1]", "[the 3]"}
	for fname, flavour := range flavours {
		for bname, backing := range backings {
			t.Run(fname+"/"+bname, func(t *testing.T) {
				ctx := context.Background()
				ms := flavour(backing(t))
				commit(t, ms, 1, func() error {
					return ms.MultiPut(ctx, keys("the", "cow", "jumped", "over", "moon"), []int64{2, 1, 1, 1, 1})
				})
				commit(t, ms, 2, func() error {
					if _, err := ms.MultiUpdate(ctx, keys("the"), []state.ValueUpdater[int64]{state.Combine[int64](state.CombinerFunc[int64](func(a, b int64) int64 { return a + b }), 1)}); err != nil {
						return err
					}
					return ms.(state.Remover).MultiRemove(ctx, keys("over"))
				})
				q := ops.TupleCollectionGet[state.MapState[int64]]()
				if e, ok := q.(trident.EveryPartition); !ok || !e.EveryPartition() {
					t.Fatalf("TupleCollectionGet does not ask every partition")
				}
				got := rowsOf(t, q, ms)
				slices.Sort(got) // listed in the order of the keys' encodings
				if !slices.Equal(got, want) {
					t.Fatalf("rows %v, want %v", got, want)
				}
			})
		}
	}
}

// TestTupleCollectionGetRefusals: a map state over a backing map that
// cannot list, and a state that is no tuple collection, fail the query
// with errors that say so.
func TestTupleCollectionGetRefusals(t *testing.T) {
	ctx := context.Background()
	ms := opaque.New[int64](notListable{state.NewMemory("cassandra-like")}, state.MapOptions[int64]{})
	q := ops.TupleCollectionGet[state.MapState[int64]]()
	res, err := q.BatchRetrieve(ctx, ms, []trident.Tuple{trident.NewTuple(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Execute(ctx, trident.NewTuple(nil), res[0], discard{}); !errors.Is(err, state.ErrNotListable) {
		t.Fatalf("listing over a map that cannot list: %v, want state.ErrNotListable", err)
	}
	g := ops.TupleCollectionGet[*state.Global[int64]]()
	if _, err := g.BatchRetrieve(ctx, state.NewGlobal[int64](ms, state.GlobalKey()), []trident.Tuple{trident.NewTuple(nil)}); !errors.Is(err, ops.ErrNotTupleCollection) {
		t.Fatalf("listing a snapshot: %v, want ops.ErrNotTupleCollection", err)
	}
}

type discard struct{}

func (discard) Emit(...any)       {}
func (discard) ReportError(error) {}

func keys(words ...string) []state.Key {
	out := make([]state.Key, len(words))
	for i, w := range words {
		out[i] = state.MustKey(w)
	}
	return out
}

func commit(t *testing.T, ms state.MapState[int64], txid txn.TxID, write func() error) {
	t.Helper()
	ctx := context.Background()
	if err := ms.BeginCommit(ctx, txid); err != nil {
		t.Fatal(err)
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if err := ms.Commit(ctx, txid); err != nil {
		t.Fatal(err)
	}
}

// rowsOf runs q for one query tuple and returns what it emitted, printed.
func rowsOf(t *testing.T, q trident.QueryFunction[state.MapState[int64], iter.Seq2[[]any, error]], ms state.MapState[int64]) []string {
	t.Helper()
	ctx := context.Background()
	res, err := q.BatchRetrieve(ctx, ms, []trident.Tuple{trident.NewTuple(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var rec collect
	if err := q.Execute(ctx, trident.NewTuple(nil), res[0], &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

type collect []string

func (c *collect) Emit(values ...any) { *c = append(*c, fmt.Sprint(any(values))) }
func (c *collect) ReportError(error)  {}
