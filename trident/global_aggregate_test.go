package trident

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/txn"
)

// countReducer counts tuples as a ReducerAggregator.
type countReducer struct{}

func (countReducer) Init() int64                              { return 0 }
func (countReducer) Reduce(acc int64, _ Tuple) (int64, error) { return acc + 1, nil }

// countAggregator counts tuples as a plain Aggregator.
type countAggregator struct{}

func (countAggregator) Init(txn.Attempt, Collector) (int64, error)               { return 0, nil }
func (countAggregator) Aggregate(acc int64, _ Tuple, _ Collector) (int64, error) { return acc + 1, nil }
func (countAggregator) Complete(acc int64, out Collector) error                  { out.Emit(acc); return nil }

// sumField sums the int64 field "n" as a CombinerAggregator.
type sumField struct{}

func (sumField) Init(t Tuple) (int64, error) { return t.Get("n").(int64), nil }
func (sumField) Combine(a, b int64) int64    { return a + b }
func (sumField) Zero() int64                 { return 0 }

// TestGlobalAggregationIsOnePerBatch: a global aggregation (Aggregate)
// with a parallelism of 2 answers one tuple per request, whatever the
// aggregator kind, with and without a partition aggregation in front: the
// task that gets none of a batch emits nothing, as in Storm, where it gets
// no batch at all. Storm's expected values: a count of "a b c" is [[3]],
// of "" is [[0]].
func TestGlobalAggregationIsOnePerBatch(t *testing.T) {
	words := FlatMapFunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
		for _, w := range strings.Fields(t.String("args")) {
			out.Emit(w)
		}
		return nil
	})
	kinds := []struct {
		name  string
		build func(s *Stream) *Stream
	}{
		{"combiner", func(s *Stream) *Stream { return Aggregate(s, Fields{"word"}, Combining[int64](count{}), "n") }},
		{"reducer", func(s *Stream) *Stream { return Aggregate(s, Fields{"word"}, Reducing[int64](countReducer{}), "n") }},
		{"aggregator", func(s *Stream) *Stream {
			return Aggregate(s, Fields{"word"}, Aggregator[int64](countAggregator{}), "n")
		}},
		{"partition then global", func(s *Stream) *Stream {
			partial := PartitionAggregate(s, Fields{"word"}, Combining[int64](count{}), "n")
			return Aggregate(partial, Fields{"n"}, Combining[int64](sumField{}), "total")
		}},
	}
	cases := []struct {
		args string
		want string
	}{
		{"a b c", "[[3]]"},
		{"", "[[0]]"},
		{"x", "[[1]]"},
		{"the the the the the", "[[5]]"},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server := drpc.NewServer(drpc.Config{})
				tt := NewTopology("global-" + strings.ReplaceAll(k.name, " ", "-"))
				split := tt.NewDRPCStream("count", server).Shuffle().FlatMap(words, "word").Parallelism(3)
				out := k.build(split).Parallelism(2)
				ReturnResults(out, "count", out.n.sch.fields...)
				submit(t, tt, Config{MaxBatchesInFlight: 2})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				for _, c := range cases {
					res, err := server.Execute(ctx, "count", c.args, 0)
					if err != nil {
						t.Fatalf("count(%q): %v", c.args, err)
					}
					if got := fmt.Sprint(res.Rows); got != c.want {
						t.Errorf("count(%q) = %s, want %s (Storm's answer)", c.args, got, c.want)
					}
				}
			})
		})
	}
}

// TestBatchGlobalAggregationIsOnePerBatch: after BatchGlobal, the one task
// a batch's txid selects completes an aggregation of an empty batch; the
// others emit nothing for it.
func TestBatchGlobalAggregationIsOnePerBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		tt := NewTopology("batch-global")
		s := tt.NewDRPCStream("count", server).FlatMap(FlatMapFunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
			for _, w := range strings.Fields(t.String("args")) {
				out.Emit(w)
			}
			return nil
		}), "word").BatchGlobal()
		out := PartitionAggregate(s, Fields{"word"}, Combining[int64](count{}), "n").Parallelism(3)
		ReturnResults(out, "count", "n")
		submit(t, tt, Config{MaxBatchesInFlight: 2})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i, args := range []string{"", "a", "", "a b", ""} {
			res, err := server.Execute(ctx, "count", args, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("[[%d]]", len(strings.Fields(args)))
			if got := fmt.Sprint(res.Rows); got != want {
				t.Errorf("request %d: count(%q) = %s, want %s", i, args, got, want)
			}
		}
	})
}

// TestDRPCSourceRunsInOneTask: asking for more tasks next to a DRPC
// stream's source is refused at Submit, naming the fix; a Shuffle in
// between is accepted.
func TestDRPCSourceRunsInOneTask(t *testing.T) {
	server := drpc.NewServer(drpc.Config{})
	tt := NewTopology("drpc-parallel-source")
	q := tt.NewDRPCStream("f", server).Each(Fields{"args"}, FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
		out.Emit(t.String("args"))
		return nil
	}), "echo").Parallelism(2)
	ReturnResults(q, "f", "echo")
	_, err := tt.Submit(context.Background(), Config{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Shuffle()") || !strings.Contains(err.Error(), "2 tasks") {
		t.Fatalf("Submit = %v, want ErrInvalid naming Shuffle() and 2 tasks", err)
	}
}
