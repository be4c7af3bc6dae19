package ops

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/trident"
)

// runQuery runs q over args: BatchRetrieve once, then Execute per tuple,
// each seeing the same tuples (runQueryOn gives Execute the whole tuple,
// as the runtime does). It returns what each tuple emitted.
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

// runQueryOn runs q as the runtime runs a StateQuery: BatchRetrieve sees
// each tuple's input fields, Execute the whole tuple. It returns what each
// tuple emitted and the error of each Execute.
func runQueryOn[S, R any](t *testing.T, q trident.QueryFunction[S, R], st S, input []string, tuples []trident.Tuple) ([][][]any, []error) {
	t.Helper()
	args := make([]trident.Tuple, len(tuples))
	for i, tu := range tuples {
		vals := make([]any, len(input))
		for j, f := range input {
			vals[j] = tu.Get(f)
		}
		args[i] = trident.NewTuple(input, vals...)
	}
	results, err := q.BatchRetrieve(context.Background(), st, args)
	if err != nil || len(results) != len(args) {
		t.Fatalf("BatchRetrieve: %d results for %d tuples, %v", len(results), len(args), err)
	}
	out := make([][][]any, len(tuples))
	errs := make([]error, len(tuples))
	for i, r := range results {
		rec := &recorder{}
		errs[i] = q.Execute(context.Background(), tuples[i], r, rec)
		out[i] = rec.emitted
	}
	return out, errs
}

// TestMapGetKeyIsTheInputFields: the key is made of the query's input
// fields only; another field that could not be a key (a map) does not
// reject the tuple, a bad input field does.
func TestMapGetKeyIsTheInputFields(t *testing.T) {
	m := counts(t, entry{"r1", 14, 3})
	tuples := []trident.Tuple{
		tup("args room hour", map[string]int{"not": 1}, "r1", 14),
		tup("args room hour", map[string]int{"not": 1}, "r2", 14),
		tup("args room hour", "x", map[string]int{"bad": 1}, 14),
	}
	got, errs := runQueryOn(t, MapGet[*opaque.Map[int64]](), m, []string{"room", "hour"}, tuples)
	if errs[0] != nil || errs[1] != nil || !reflect.DeepEqual(got[:2], [][][]any{{{int64(3)}}, {{nil}}}) {
		t.Fatalf("a map outside the key: emitted %v, errors %v; want 3 and nil, no error", got[:2], errs[:2])
	}
	if !errors.Is(errs[2], state.ErrBadKey) || !strings.HasPrefix(errs[2].Error(), "trident: tuple rejected: ops: MapGet: query tuple [map[bad:1] 14]: ") {
		t.Fatalf("a map in the key: %v; want a rejection naming the key's values", errs[2])
	}
}

// TestMapGetLargeOtherField: a batch of absent keys whose tuples carry a
// 1 MiB field outside the key (a DRPC request's arguments) costs the keys'
// encodings, not one copy of the tuple per absent key: it allocates far
// less than the argument times the tuples (2 GiB before the key was
// encoded once per tuple from the input fields only).
func TestMapGetLargeOtherField(t *testing.T) {
	m := counts(t, entry{"r1", 14, 3})
	big := strings.Repeat("w ", 1<<19) // 1 MiB
	tuples := make([]trident.Tuple, 2000)
	for i := range tuples {
		tuples[i] = tup("args room hour", big, "absent", i)
	}
	q := MapGet[*opaque.Map[int64]]()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	got, errs := runQueryOn(t, q, m, []string{"room", "hour"}, tuples)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("%d absent keys: %d KiB allocated in %v", len(tuples), (after.TotalAlloc-before.TotalAlloc)>>10, took)
	for i := range tuples {
		if errs[i] != nil || !reflect.DeepEqual(got[i], [][]any{{nil}}) {
			t.Fatalf("tuple %d: %v, %v; want nil (absent)", i, got[i], errs[i])
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("%d absent keys with a 1 MiB field outside the key allocated %d MiB (in %v); want under 16 MiB", len(tuples), alloc>>20, took)
	}
	if took > time.Second {
		t.Fatalf("%d absent keys with a 1 MiB field outside the key took %v; want well under a second", len(tuples), took)
	}
}
