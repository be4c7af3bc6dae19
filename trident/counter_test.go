package trident

import (
	"context"
	"maps"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/spout"
)

// tupleCount is borrowingCount declaring that it counts tuples
// (TupleCounter), as ops.Count does; inits, if set, counts the calls of
// Init, which the counting path does not make.
type tupleCount struct {
	borrowingCount
	inits *atomic.Int64
}

func (c tupleCount) Init(Tuple) (int64, error) {
	if c.inits != nil {
		c.inits.Add(1)
	}
	return 1, nil
}
func (tupleCount) CountsTuples() bool { return true }

// intCount declares that it counts tuples, but its values are ints: the
// declaration is ignored.
type intCount struct{ inits *atomic.Int64 }

func (c intCount) Init(Tuple) (int, error) { c.inits.Add(1); return 1, nil }
func (intCount) Combine(a, b int) int      { return a + b }
func (intCount) Zero() int                 { return 0 }
func (intCount) CountsTuples() bool        { return true }

// TestTupleCounterCountsWithoutInit: an aggregator that counts tuples is
// not called per tuple, and its counts are those of count: after a
// pre-aggregation fed by EmitString (the string path) and by Emit (the
// tuple path), and without pre-aggregation (a global count, which the
// committer counts). A declaration on an aggregator of another value
// type is ignored.
func TestTupleCounterCountsWithoutInit(t *testing.T) {
	cases := []struct {
		name   string
		split  Function
		global bool
	}{
		{"EmitString", splitStrings, false},
		{"Emit", split, false},
		{"global", split, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var inits atomic.Int64
				f := OpaqueMemory[int64]("counted")
				tt := NewTopology("counter")
				s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(2, sentences...) }))
				ws := s.Each(Fields{"sentence"}, c.split, "word")
				if c.global {
					PersistentAggregateGlobal(ws, f, Fields{"word"}, tupleCount{inits: &inits}, "count")
				} else {
					PersistentAggregate(ws.GroupBy("word").Parallelism(2), f, Fields{"word"}, tupleCount{inits: &inits}, "count")
				}
				r := submit(t, tt, Config{})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := r.WaitCommitted(ctx, 3); err != nil {
					t.Fatal(err)
				}
				if c.global {
					ms, err := f(ctx, 0, 1)
					if err != nil {
						t.Fatal(err)
					}
					v, err := ms.MultiGet(ctx, []state.Key{state.GlobalKey()})
					if err != nil || v[0].Val != 28 {
						t.Fatalf("%d words counted (%v), want 28", v[0].Val, err)
					}
				} else if got := readCounts(t, f, 2, words()...); !maps.Equal(got, wantCounts()) {
					t.Fatalf("counts = %v, want %v", got, wantCounts())
				}
				if n := inits.Load(); n != 0 {
					t.Fatalf("Init was called %d times", n)
				}
			})
		})
	}
	t.Run("int values", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var inits atomic.Int64
			tt := NewTopology("counter")
			s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return newFixed(2, sentences...) }))
			PersistentAggregate(s.Each(Fields{"sentence"}, splitStrings, "word").GroupBy("word"), OpaqueMemory[int]("ints"), Fields{"word"}, intCount{&inits}, "count")
			r := submit(t, tt, Config{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := r.WaitCommitted(ctx, 3); err != nil {
				t.Fatal(err)
			}
			if inits.Load() == 0 {
				t.Fatal("Init of an aggregator of ints was never called")
			}
		})
	})
}
