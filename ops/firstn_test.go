package ops

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/txn"
)

// runFirstN runs one aggregation over rows of the given fields and
// returns the emitted tuples.
func runFirstN[V any](agg trident.Aggregator[*Ranking[V]], fields string, rows [][]any) ([][]any, error) {
	out := &recorder{}
	acc, err := agg.Init(txn.Attempt{TxID: 1}, out)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if acc, err = agg.Aggregate(acc, tup(fields, r...), out); err != nil {
			return nil, err
		}
	}
	if err := agg.Complete(acc, out); err != nil {
		return nil, err
	}
	return out.emitted, nil
}

func ids(rows [][]any) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r[0]
	}
	return out
}

// firstNCase is one table row: run returns the emitted tuples.
type firstNCase struct {
	name string
	run  func(rows [][]any) ([][]any, error)
	rows [][]any
	want []any // ids, in emitted order
}

func TestFirstN(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	scores := [][]any{{"a", 5}, {"b", 1}, {"c", 9}, {"d", 1}, {"e", 7}, {"f", 9}}
	asc := func(n int) func([][]any) ([][]any, error) {
		return func(rows [][]any) ([][]any, error) {
			return runFirstN(FirstN[int64](n, "score", false), "id score", rows)
		}
	}
	desc := func(n int) func([][]any) ([][]any, error) {
		return func(rows [][]any) ([][]any, error) {
			return runFirstN(FirstN[int64](n, "score", true), "id score", rows)
		}
	}
	tests := []firstNCase{
		{"empty input emits nothing", asc(3), nil, []any{}},
		{"ascending", asc(3), scores, []any{"b", "d", "a"}},
		{"descending", desc(3), scores, []any{"c", "f", "e"}},
		{"ties keep arrival order", desc(2), scores, []any{"c", "f"}},
		{"tie at the cut keeps the earlier", asc(1), scores, []any{"b"}},
		{"n above the input size", asc(10), scores, []any{"b", "d", "a", "e", "c", "f"}},
		{"mixed integer types", asc(3),
			[][]any{{"a", uint64(1 << 62)}, {"b", int8(-2)}, {"c", int64(-3)}, {"d", uint8(0)}, {"e", 1}},
			[]any{"c", "b", "d"}},
		{"nil scores rank last ascending", asc(3),
			[][]any{{"a", nil}, {"b", 3}, {"c", nil}, {"d", 1}}, []any{"d", "b", "a"}},
		{"nil scores rank last descending", desc(3),
			[][]any{{"a", nil}, {"b", 3}, {"c", nil}, {"d", 1}}, []any{"b", "d", "a"}},
		{"floats and ints", func(rows [][]any) ([][]any, error) {
			return runFirstN(FirstN[float64](2, "score", true), "id score", rows)
		}, [][]any{{"a", 2}, {"b", 2.5}, {"c", float32(-1)}, {"d", uint16(3)}}, []any{"d", "b"}},
		{"strings", func(rows [][]any) ([][]any, error) {
			return runFirstN(FirstN[string](2, "score", false), "id score", rows)
		}, [][]any{{"a", "pear"}, {"b", "apple"}, {"c", roomID("fig")}}, []any{"b", "c"}},
		{"times", func(rows [][]any) ([][]any, error) {
			return runFirstN(FirstN[time.Time](2, "score", true), "id score", rows)
		}, [][]any{{"a", t0}, {"b", t0.Add(time.Hour)}, {"c", t0.Add(-time.Hour)}, {"d", t0.Add(time.Minute)}}, []any{"b", "d"}},
		{"FirstNBy", func(rows [][]any) ([][]any, error) {
			return runFirstN(FirstNBy(2, "score", func(a, b reading) int { return -byTemp(a, b) }), "id score", rows)
		}, [][]any{{"a", reading{"x", 3}}, {"b", reading{"y", 9}}, {"c", reading{"z", 9}}}, []any{"b", "c"}},
		{"Take keeps the first arrivals", func(rows [][]any) ([][]any, error) {
			return runFirstN(Take(2), "id score", rows)
		}, scores, []any{"a", "b"}},
		{"Take of fewer", func(rows [][]any) ([][]any, error) {
			return runFirstN(Take(5), "id score", rows)
		}, scores[:2], []any{"a", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.run(tc.rows)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ids(got), tc.want) {
				t.Fatalf("emitted %v, want ids %v", got, tc.want)
			}
			for _, row := range got {
				i := slices.IndexFunc(tc.rows, func(r []any) bool { return r[0] == row[0] })
				if !reflect.DeepEqual(row, tc.rows[i]) {
					t.Fatalf("emitted %v, want the whole input tuple %v", row, tc.rows[i])
				}
			}
		})
	}
}

func TestFirstNErrors(t *testing.T) {
	tests := []struct {
		name string
		run  func() ([][]any, error)
		want string
	}{
		{"string among numbers", func() ([][]any, error) {
			return runFirstN(FirstN[int64](2, "score", false), "id score", [][]any{{"a", 1}, {"b", "x"}})
		}, `trident: tuple rejected: ops: FirstN: field "score" holds string "x", want int64`},
		{"first value bad", func() ([][]any, error) {
			return runFirstN(FirstN[int64](2, "score", false), "id score", [][]any{{"a", "x"}, {"b", 1}})
		}, `trident: tuple rejected: ops: FirstN: field "score" holds string "x", want int64`},
		{"float for an integer type", func() ([][]any, error) {
			return runFirstN(FirstN[int](2, "score", false), "id score", [][]any{{"a", 1.5}})
		}, `trident: tuple rejected: ops: FirstN: field "score" holds float64 1.5, want int`},
		{"FirstNBy wrong type", func() ([][]any, error) {
			return runFirstN(FirstNBy(2, "score", byTemp), "id score", [][]any{{"a", 20}})
		}, `trident: tuple rejected: ops: FirstNBy: field "score" holds int 20, want ops.reading`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.run()
			checkErr(t, err, tc.want)
			checkBadValue(t, err)
		})
	}
	_, err := runFirstN(FirstN[int](2, "score", false), "id points", [][]any{{"a", 1}})
	checkErr(t, err, `ops: FirstN: tuple with fields [id points] has no field "score"`)
	if !errors.Is(err, ErrNoField) || errors.Is(err, ErrBadValue) {
		t.Fatalf("%v: want ErrNoField, not a rejection", err)
	}
}

// TestFirstNRejectsTheSameTuplesInAnyOrder: a bad sort value is rejected
// whatever arrives before it, and the batch goes on with the ranking as
// it was, as the runtime does after sending the tuple to the dead letters.
func TestFirstNRejectsTheSameTuplesInAnyOrder(t *testing.T) {
	rows := [][]any{{"bad", "x"}, {"a", 3}, {"worse", true}, {"b", 1}, {"c", 2}}
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {1, 3, 0, 4, 2}} {
		agg := FirstN[int64](2, "score", false)
		out := &recorder{}
		acc, _ := agg.Init(txn.Attempt{TxID: 1}, out)
		var rejected []any
		for _, i := range order {
			next, err := agg.Aggregate(acc, tup("id score", rows[i]...), out)
			if err != nil {
				checkBadValue(t, err)
				rejected = append(rejected, rows[i][0])
			}
			acc = next
		}
		if err := agg.Complete(acc, out); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(rejected, func(a, b any) int { return cmp.Compare(a.(string), b.(string)) })
		if got := ids(out.emitted); !reflect.DeepEqual(got, []any{"b", "c"}) || !reflect.DeepEqual(rejected, []any{"bad", "worse"}) {
			t.Fatalf("order %v: emitted %v, rejected %v", order, got, rejected)
		}
	}
}

func TestFirstNConstructorsPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"FirstN n=0":       func() { FirstN[int](0, "score", false) },
		"FirstN no field":  func() { FirstN[int](1, "", false) },
		"FirstNBy nil cmp": func() { FirstNBy[int](1, "score", nil) },
		"Take n=-1":        func() { Take(-1) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

// TestFirstNAssemblyMatchesModel runs the three-step assembly (FirstN per
// partition, then FirstN over what the partitions emitted) on random
// input and compares with sorting everything. Scores are unique so that
// the expected result does not depend on how partitions interleave.
func TestFirstNAssemblyMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		scores := rapid.SliceOfDistinct(rapid.IntRange(-50, 50), func(i int) int { return i }).Draw(t, "scores")
		n := rapid.IntRange(1, 8).Draw(t, "n")
		desc := rapid.Bool().Draw(t, "descending")
		parts := rapid.IntRange(1, 4).Draw(t, "partitions")
		partition := make([][][]any, parts)
		for i, s := range scores {
			p := rapid.IntRange(0, parts-1).Draw(t, "partition")
			var score any = s
			if i%2 == 1 {
				score = float64(s) // mixed types rank together
			}
			partition[p] = append(partition[p], []any{i, score})
		}
		var global [][]any
		for _, rows := range partition {
			out, err := runFirstN(FirstN[float64](n, "score", desc), "id score", rows)
			if err != nil {
				t.Fatal(err)
			}
			if len(out) > n {
				t.Fatalf("a partition emitted %d tuples for n = %d", len(out), n)
			}
			global = append(global, out...)
		}
		got, err := runFirstN(FirstN[float64](n, "score", desc), "id score", global)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(scores)
		slices.Sort(want)
		if desc {
			slices.Reverse(want)
		}
		want = want[:min(n, len(want))]
		gotScores := make([]int, len(got))
		for i, row := range got {
			gotScores[i] = scores[row[0].(int)]
		}
		if !slices.Equal(gotScores, want) {
			t.Fatalf("scores %v, want %v", gotScores, want)
		}
	})
}

// TestFirstNMatchesStableSort checks one partition against a stable sort
// of the whole input, with many ties and nils.
func TestFirstNMatchesStableSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		scores := rapid.SliceOf(rapid.Ptr(rapid.IntRange(0, 5), true)).Draw(t, "scores")
		n := rapid.IntRange(1, 10).Draw(t, "n")
		desc := rapid.Bool().Draw(t, "descending")
		rows := make([][]any, len(scores))
		for i, s := range scores {
			rows[i] = []any{i, nil}
			if s != nil {
				rows[i][1] = *s
			}
		}
		got, err := runFirstN(FirstN[int](n, "score", desc), "id score", rows)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(rows)
		slices.SortStableFunc(want, func(a, b []any) int {
			switch {
			case a[1] == nil && b[1] == nil:
				return 0
			case a[1] == nil:
				return 1
			case b[1] == nil:
				return -1
			case desc:
				return b[1].(int) - a[1].(int)
			}
			return a[1].(int) - b[1].(int)
		})
		want = want[:min(n, len(want))]
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}

func TestFirstNKeepsCopies(t *testing.T) {
	agg := Take(1)
	out := &recorder{}
	acc, _ := agg.Init(txn.Attempt{TxID: 1}, out)
	vals := []any{"a", 1}
	acc, _ = agg.Aggregate(acc, trident.NewTuple(trident.Fields{"id", "score"}, vals...), out)
	vals[0] = "changed" // the runtime reuses tuple memory after the call
	_ = agg.Complete(acc, out)
	if out.emitted[0][0] != "a" {
		t.Fatalf("Take kept the caller's slice: emitted %v", out.emitted)
	}
}
