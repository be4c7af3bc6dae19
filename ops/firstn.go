package ops

import (
	"fmt"
	"slices"

	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/txn"
)

// FirstN returns the aggregator behind Trident's FirstN with a sort field:
// it keeps the n tuples of a partition's batch with the smallest values
// of sortField (the largest with descending) and emits them, best first,
// whole (every field, in the input's order). It panics if n < 1.
//
// Sort values are converted to V as for Min, so FirstN[float64] ranks
// ints and floats together and FirstN[time.Time] ranks times; a value that
// does not convert is a *ValueError and its tuple is rejected (see the
// package documentation). Declaring V, rather than ordering whatever
// comes, is what makes the rejected tuples the same whatever order the
// tuples arrive in. Tuples with a nil sort value rank after all others,
// in both directions. Ties rank by arrival, so that the result is
// deterministic for a given input order.
//
// FirstN of a whole stream is an assembly of three steps (Storm's
// FirstN assembly): PartitionAggregate with this aggregator on every
// partition, with the stream's fields as input and as output; Global; and
// PartitionAggregate with the same aggregator on the one remaining
// partition. Each partition sends at most n tuples on. The order in which
// partitions' tuples reach the global step varies, so among tuples tied
// at the cut-off the ones kept may differ between replays of a batch;
// rank by a unique value when that matters.
//
// FirstN holds at most n tuples per partition and batch, and does
// O(log n) work per tuple.
func FirstN[V Ordered](n int, sortField string, descending bool) trident.Aggregator[*Ranking[V]] {
	if sortField == "" {
		panic("ops: FirstN: empty sort field (use Take to keep the first arrivals)")
	}
	return newFirstN("FirstN", n, sortField, orderOf[V](), descending)
}

// FirstNBy is FirstN with an order of your own: the tuples whose sort
// values come first by cmp (negative when a comes before b, a total order
// as for slices.SortFunc). Values are converted to V as for MinBy. It
// panics if n < 1 or cmp is nil.
func FirstNBy[V any](n int, sortField string, cmp func(a, b V) int) trident.Aggregator[*Ranking[V]] {
	if cmp == nil || sortField == "" {
		panic("ops: FirstNBy: nil comparison or empty sort field")
	}
	return newFirstN("FirstNBy", n, sortField, cmp, false)
}

// Take returns the aggregator behind Trident's FirstN without a sort
// field: it keeps the first n tuples of a partition's batch, in arrival
// order, and emits them whole. Its stream-level assembly is FirstN's. It
// panics if n < 1.
func Take(n int) trident.Aggregator[*Ranking[struct{}]] {
	return newFirstN[struct{}]("Take", n, "", nil, false)
}

func newFirstN[V any](op string, n int, field string, cmp func(a, b V) int, desc bool) firstN[V] {
	if n < 1 {
		panic(fmt.Sprintf("ops: %s: n is %d, want at least 1", op, n))
	}
	return firstN[V]{op: op, n: n, field: field, cmp: cmp, desc: desc}
}

type firstN[V any] struct {
	op    string
	n     int
	field string           // "" ranks by arrival
	cmp   func(a, b V) int // nil when field is ""
	desc  bool
}

// Ranking is the accumulator of FirstN, FirstNBy and Take: the best tuples
// of one partition's batch so far.
type Ranking[V any] struct {
	by   firstN[V]
	seq  uint64      // arrival number of the next tuple
	heap []ranked[V] // the kept tuples, worst at the root
}

// ranked is a kept tuple.
type ranked[V any] struct {
	key    *V // the sort value; nil for nil
	seq    uint64
	values []any
}

// Init returns an empty ranking.
func (f firstN[V]) Init(txn.Attempt, trident.Collector) (*Ranking[V], error) {
	return &Ranking[V]{by: f, heap: make([]ranked[V], 0, min(f.n, 64))}, nil
}

// Aggregate ranks t and keeps a copy of its values if it is among the n
// best so far.
func (f firstN[V]) Aggregate(r *Ranking[V], t trident.Tuple, _ trident.Collector) (*Ranking[V], error) {
	e := ranked[V]{seq: r.seq}
	if f.field != "" {
		v, err := lookup(f.op, t, f.field)
		if err != nil {
			return r, err
		}
		if v != nil {
			x, problem := convert[V](v)
			if problem != "" {
				return r, badValue(&ValueError{Op: f.op, Field: f.field, Value: v, Problem: problem})
			}
			e.key = &x
		}
	}
	r.seq++
	switch {
	case len(r.heap) < f.n:
		e.values = slices.Clone(t.Values())
		r.heap = append(r.heap, e)
		r.up(len(r.heap) - 1)
	case r.before(e, r.heap[0]):
		e.values = slices.Clone(t.Values())
		r.heap[0] = e
		r.down(0)
	}
	return r, nil
}

// Complete emits the kept tuples, best first.
func (f firstN[V]) Complete(r *Ranking[V], out trident.Collector) error {
	slices.SortFunc(r.heap, func(a, b ranked[V]) int {
		if r.before(a, b) {
			return -1
		}
		return 1 // arrival numbers are unique: no two tuples tie
	})
	for _, e := range r.heap {
		out.Emit(e.values...)
	}
	return nil
}

// before reports whether a ranks before b.
func (r *Ranking[V]) before(a, b ranked[V]) bool {
	if r.by.field != "" {
		switch {
		case a.key == nil && b.key != nil:
			return false
		case a.key != nil && b.key == nil:
			return true
		case a.key != nil:
			c := r.by.cmp(*a.key, *b.key)
			if r.by.desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
	}
	return a.seq < b.seq
}

// up and down keep r.heap a heap in which no tuple ranks before its
// parent, so that the root is the worst kept tuple.
func (r *Ranking[V]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !r.before(r.heap[p], r.heap[i]) {
			return
		}
		r.heap[p], r.heap[i] = r.heap[i], r.heap[p]
		i = p
	}
}

func (r *Ranking[V]) down(i int) {
	for {
		worst, l := i, 2*i+1
		if l < len(r.heap) && r.before(r.heap[worst], r.heap[l]) {
			worst = l
		}
		if rt := l + 1; rt < len(r.heap) && r.before(r.heap[worst], r.heap[rt]) {
			worst = rt
		}
		if worst == i {
			return
		}
		r.heap[i], r.heap[worst] = r.heap[worst], r.heap[i]
		i = worst
	}
}
