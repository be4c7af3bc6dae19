package ops

import (
	"context"
	"fmt"
	"iter"
	"unicode/utf8"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// MapGet returns a state query that looks up each query tuple in grouped
// map state of type S (Storm's MapGet). S is the state's type as the
// topology declares it, such as state.MapState[int64] for the state of a
// PersistentAggregate; V, the value type, is inferred from it:
//
//	ops.MapGet[state.MapState[int64]]()
//
// The key is the query tuple's input fields (StateQuery's input), in
// order, so query with the fields the state was grouped by, in the same
// order: a state grouped by ("room", "hour") is queried with the fields
// ("room", "hour"). The other fields of the tuple are never part of the
// key.
//
// The query encodes each tuple's key once, reads every key of a batch in
// one MultiGet and emits one value per query tuple: the stored value, or
// nil when the key is absent (as Storm emits null), so that "absent" and
// "zero" stay apart. Put FilterNull after it to drop absent keys.
//
// A query tuple whose input fields cannot form a key (state.ErrBadKey,
// such as a map value) is rejected with trident.Reject; a MultiGet error
// is returned wrapped, keeping its failure kind.
func MapGet[S state.ReadOnlyMapState[V], V any]() trident.QueryFunction[S, Lookup[V]] {
	return mapGet[S, V]{}
}

// Lookup is MapGet's result for one query tuple: the entry stored under
// the tuple's key, or why its input fields form no key.
type Lookup[V any] struct {
	state.Entry[V]
	// Err, if not nil, says why the tuple's input fields form no key (it
	// matches state.ErrBadKey); the entry is then empty.
	Err error
}

type mapGet[S state.ReadOnlyMapState[V], V any] struct{}

// maxKeyText bounds how much of a bad key's values an error quotes.
const maxKeyText = 256

func (mapGet[S, V]) BatchRetrieve(ctx context.Context, st S, args []trident.Tuple) ([]Lookup[V], error) {
	out := make([]Lookup[V], len(args))
	keys := make([]state.Key, 0, len(args))
	at := make([]int, 0, len(args)) // at[j]: the argument of keys[j]
	for i, t := range args {
		k, err := state.NewKey(t.Values()...)
		if err != nil {
			out[i].Err = fmt.Errorf("ops: MapGet: query tuple %s: %w", clip(fmt.Sprint(t.Values()), maxKeyText), err)
			continue // rejected by Execute
		}
		keys = append(keys, k)
		at = append(at, i)
	}
	if len(keys) == 0 {
		return out, nil
	}
	got, err := st.MultiGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("ops: MapGet: %w", err)
	}
	if len(got) != len(keys) {
		return nil, fmt.Errorf("ops: MapGet: state returned %d entries for %d keys", len(got), len(keys))
	}
	for j, e := range got {
		out[at[j]].Entry = e
	}
	return out, nil
}

func (mapGet[S, V]) Execute(_ context.Context, _ trident.Tuple, l Lookup[V], out trident.Collector) error {
	switch {
	case l.Err != nil:
		return trident.Reject(l.Err)
	case l.Found:
		out.Emit(l.Val)
	default:
		out.Emit(nil)
	}
	return nil
}

// clip returns s cut to at most n bytes, marked when cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// SnapshotGet returns a state query that reads ungrouped state of type S
// (Storm's SnapshotGet), such as ops.SnapshotGet[*state.Global[int64]]():
// the state's single value is read once per batch and emitted for every
// query tuple, or nil when the state has no value. A Get error is
// returned wrapped, keeping its failure kind.
func SnapshotGet[S state.Snapshottable[V], V any]() trident.QueryFunction[S, state.Entry[V]] {
	return snapshotGet[S, V]{}
}

type snapshotGet[S state.Snapshottable[V], V any] struct{}

func (snapshotGet[S, V]) BatchRetrieve(ctx context.Context, st S, args []trident.Tuple) ([]state.Entry[V], error) {
	out := make([]state.Entry[V], len(args))
	if len(args) == 0 {
		return out, nil
	}
	v, found, err := st.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("ops: SnapshotGet: %w", err)
	}
	for i := range out {
		out[i] = state.Entry[V]{Val: v, Found: found}
	}
	return out, nil
}

func (snapshotGet[S, V]) Execute(_ context.Context, _ trident.Tuple, e state.Entry[V], out trident.Collector) error {
	if e.Found {
		out.Emit(e.Val)
	} else {
		out.Emit(nil)
	}
	return nil
}

// TupleCollection is state that can list its content as tuples (Storm's
// ITupleCollection), such as the opaque, transactional and
// non-transactional map states over a backing map that lists its keys
// (memory, bbolt, Cassandra): their rows are a key's values followed by
// its value.
type TupleCollection interface {
	// Tuples returns the state's tuples. The sequence reads with ctx and
	// may be ranged more than once; each range starts from the
	// beginning. It yields a non-nil error, with a nil tuple, to end early
	// on failure. A yielded slice must not be modified afterwards.
	Tuples(ctx context.Context) iter.Seq2[[]any, error]
}

// TupleCollectionGet returns a state query that emits every tuple of the
// state for each query tuple (Storm's TupleCollectionGet): each output
// tuple is the query tuple followed by one state tuple's values. Query
// with no input fields and as many outputs as a state tuple has values;
// over the state of a PersistentAggregate, the group fields and the
// value:
//
//	trident.StateQuery(q, counts, nil, ops.TupleCollectionGet[state.MapState[int64]](), "word", "count")
//
// S is the state's type as the topology declares it; the state value must
// be a TupleCollection, which every map state of this module is. A state
// that is not fails the query with an error matching
// ErrNotTupleCollection, and a map state whose backing map cannot list
// its keys (not a state.KeyLister) with one matching
// state.ErrNotListable: both are fatal. A Cassandra map lists its keys
// by scanning its whole table, every partition scanning it once per
// query (see state/cassandra). Another error yielded by the sequence is returned wrapped,
// keeping its failure kind.
//
// It asks every partition of the state (trident.EveryPartition), as
// Storm's broadcast().stateQuery(...) does: each partition emits its own
// tuples, so a query tuple gets every key exactly once, whether or not
// Broadcast() comes before the query.
func TupleCollectionGet[S any]() trident.QueryFunction[S, iter.Seq2[[]any, error]] {
	return tupleCollectionGet[S]{}
}

type tupleCollectionGet[S any] struct{}

// EveryPartition reports true: every partition answers (see
// trident.EveryPartition).
func (tupleCollectionGet[S]) EveryPartition() bool { return true }

func (tupleCollectionGet[S]) BatchRetrieve(ctx context.Context, st S, args []trident.Tuple) ([]iter.Seq2[[]any, error], error) {
	tc, ok := any(st).(TupleCollection)
	if !ok {
		return nil, fmt.Errorf("%w: %T has no Tuples method", ErrNotTupleCollection, st)
	}
	out := make([]iter.Seq2[[]any, error], len(args))
	for i := range out {
		out[i] = tc.Tuples(ctx)
	}
	return out, nil
}

func (tupleCollectionGet[S]) Execute(_ context.Context, _ trident.Tuple, tuples iter.Seq2[[]any, error], out trident.Collector) error {
	for values, err := range tuples {
		if err != nil {
			return fmt.Errorf("ops: TupleCollectionGet: %w", err)
		}
		out.Emit(values...)
	}
	return nil
}
