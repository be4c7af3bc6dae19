package ops

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"strings"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/trident"
)

// runQuery runs q over args as the runtime does: BatchRetrieve once, then
// Execute per tuple. It returns what each tuple emitted.
func runQuery[S, R any](q trident.QueryFunction[S, R], st S, args []trident.Tuple) ([][][]any, error) {
	ctx := context.Background()
	results, err := q.BatchRetrieve(ctx, st, args)
	if err != nil {
		return nil, err
	}
	if len(results) != len(args) {
		return nil, errors.New("wrong number of results")
	}
	out := make([][][]any, len(args))
	for i, r := range results {
		rec := &recorder{}
		if err := q.Execute(ctx, args[i], r, rec); err != nil {
			return out, err
		}
		out[i] = rec.emitted
	}
	return out, nil
}

// entry is one (room, hour) → value of a test map.
type entry struct {
	room string
	hour int
	val  int64
}

// counts returns an opaque map with the given entries committed by
// batch 1.
func counts(t *testing.T, es ...entry) *opaque.Map[int64] {
	t.Helper()
	ctx := context.Background()
	m := opaque.New(state.NewMemory("counts"), state.MapOptions[int64]{})
	var keys []state.Key
	var vals []int64
	for _, e := range es {
		keys = append(keys, state.MustKey(e.room, e.hour))
		vals = append(vals, e.val)
	}
	if err := m.BeginCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.MultiPut(ctx, keys, vals); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMapGet(t *testing.T) {
	m := counts(t, entry{"r1", 14, 3}, entry{"r2", 9, 0})
	args := []trident.Tuple{
		tup("room hour", "r1", 14),
		tup("room hour", "r3", 14),       // absent
		tup("room hour", "r2", int64(9)), // present with the zero value
		tup("room hour", "r1", uint8(14)),
	}
	want := [][][]any{{{int64(3)}}, {{nil}}, {{int64(0)}}, {{int64(3)}}}

	// As the state of a PersistentAggregate is typed, and as a concrete
	// map: V is inferred from S either way.
	got, err := runQuery(MapGet[state.MapState[int64]](), state.MapState[int64](m), args)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("MapGet over MapState = %v, %v; want %v", got, err, want)
	}
	got, err = runQuery(MapGet[*opaque.Map[int64]](), m, args)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("MapGet over *opaque.Map = %v, %v; want %v", got, err, want)
	}
	got, err = runQuery(MapGet[state.ReadOnlyMapState[int64]](), state.ReadOnlyMapState[int64](m), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("MapGet of no tuples = %v, %v", got, err)
	}
}

func TestMapGetBadKey(t *testing.T) {
	m := counts(t, entry{"r1", 14, 3})
	q := MapGet[*opaque.Map[int64]]()
	args := []trident.Tuple{tup("room hour", map[string]int{"x": 1}, 14), tup("room hour", "r1", 14)}
	results, err := q.BatchRetrieve(context.Background(), m, args)
	if err != nil {
		t.Fatalf("BatchRetrieve failed the whole batch for one bad tuple: %v", err)
	}
	rec := &recorder{}
	if err := q.Execute(context.Background(), args[1], results[1], rec); err != nil || !reflect.DeepEqual(rec.emitted, [][]any{{int64(3)}}) {
		t.Fatalf("good tuple after a bad one: %v, %v", rec.emitted, err)
	}
	err = q.Execute(context.Background(), args[0], results[0], rec)
	if !errors.Is(err, state.ErrBadKey) || !strings.HasPrefix(err.Error(), "trident: tuple rejected: ops: MapGet: query tuple [map[x:1] 14]: ") {
		t.Fatalf("bad tuple: %v; want a rejection matching state.ErrBadKey", err)
	}
}

// fakeMap is a ReadOnlyMapState whose MultiGet returns what it is told.
type fakeMap struct {
	state.ReadOnlyMapState[int64]
	entries []state.Entry[int64]
	err     error
	calls   int
}

func (f *fakeMap) MultiGet(context.Context, []state.Key) ([]state.Entry[int64], error) {
	f.calls++
	return f.entries, f.err
}

var errUnavailable = errors.New("store unavailable")

func TestMapGetStateErrors(t *testing.T) {
	args := []trident.Tuple{tup("k", "a"), tup("k", "b")}
	q := MapGet[*fakeMap]()
	_, err := runQuery(q, &fakeMap{err: failure.Retryable(errUnavailable)}, args)
	if !errors.Is(err, errUnavailable) || !failure.IsRetryable(err) || !strings.HasPrefix(err.Error(), "ops: MapGet: ") {
		t.Fatalf("error %v: want the state's retryable error, wrapped", err)
	}
	_, err = runQuery(q, &fakeMap{entries: []state.Entry[int64]{{Val: 1, Found: true}}}, args)
	checkErr(t, err, "ops: MapGet: state returned 1 entries for 2 keys")

	f := &fakeMap{}
	if _, err := runQuery(q, f, []trident.Tuple{tup("k", []any{map[int]int{}})}); err == nil || f.calls != 0 {
		t.Fatalf("only bad keys: error %v, %d MultiGet calls; want a rejection and no call", err, f.calls)
	}
}

func TestSnapshotGet(t *testing.T) {
	ctx := context.Background()
	m := opaque.New(state.NewMemory("global"), state.MapOptions[int64]{})
	g := state.NewGlobal[int64](m, state.Key{})
	q := SnapshotGet[*state.Global[int64]]()
	args := []trident.Tuple{tup("q", 1), tup("q", 2)}

	got, err := runQuery(q, g, args)
	if want := [][][]any{{{nil}}, {{nil}}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("absent: %v, %v; want %v", got, err, want)
	}
	if err := g.BeginCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := g.Set(ctx, 42); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got, err = runQuery(q, g, args)
	if want := [][][]any{{{int64(42)}}, {{int64(42)}}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("present: %v, %v; want %v", got, err, want)
	}

	s := &fakeSnapshot{err: failure.Reported(errUnavailable)}
	_, err = runQuery(SnapshotGet[*fakeSnapshot](), s, args)
	if !errors.Is(err, errUnavailable) || !failure.IsReported(err) || s.calls != 1 {
		t.Fatalf("error %v after %d calls: want the state's reported error after one Get", err, s.calls)
	}
	if _, err := runQuery(SnapshotGet[*fakeSnapshot](), s, nil); err != nil || s.calls != 1 {
		t.Fatalf("no tuples: %v, %d calls; want no Get", err, s.calls)
	}
}

type fakeSnapshot struct {
	state.Snapshottable[int64]
	err   error
	calls int
}

func (f *fakeSnapshot) Get(context.Context) (int64, bool, error) {
	f.calls++
	return 0, false, f.err
}

// rows is a TupleCollection; failAfter > 0 yields an error after that
// many rows.
type rows struct {
	data      [][]any
	failAfter int
	err       error
}

func (r *rows) Tuples(context.Context) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for i, row := range r.data {
			if r.failAfter > 0 && i == r.failAfter {
				yield(nil, r.err)
				return
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}

func TestTupleCollectionGet(t *testing.T) {
	st := &rows{data: [][]any{{"the", int64(4)}, {"cow", int64(1)}}}
	q := TupleCollectionGet[*rows]()
	got, err := runQuery(q, st, []trident.Tuple{tup("q", 1), tup("q", 2)})
	want := [][][]any{st.data, st.data}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, %v; want every tuple for each query tuple: %v", got, err, want)
	}
	got, err = runQuery(q, &rows{}, []trident.Tuple{tup("q", 1)})
	if err != nil || len(got[0]) != 0 {
		t.Fatalf("empty collection: %v, %v", got, err)
	}

	bad := &rows{data: [][]any{{"a"}, {"b"}, {"c"}}, failAfter: 1, err: failure.Retryable(errUnavailable)}
	rec := &recorder{}
	results, _ := q.BatchRetrieve(context.Background(), bad, []trident.Tuple{tup("q", 1)})
	err = q.Execute(context.Background(), tup("q", 1), results[0], rec)
	if !errors.Is(err, errUnavailable) || !failure.IsRetryable(err) || !strings.HasPrefix(err.Error(), "ops: TupleCollectionGet: ") {
		t.Fatalf("error %v: want the collection's retryable error, wrapped", err)
	}
	if !reflect.DeepEqual(rec.emitted, [][]any{{"a"}}) {
		t.Fatalf("emitted %v before the error", rec.emitted)
	}
}
