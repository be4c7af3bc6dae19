package state

// ValueUpdater computes a key's new value from its old one. found is false
// when the key has no value yet (old is then the zero value).
//
// The old value an updater receives is its own: the map flavours decode
// stored values afresh for every update, so an updater may modify old in
// place (append to a slice, set a map entry) and return it without harming
// the copy kept as the opaque "prev" value.
type ValueUpdater[V any] interface {
	Update(old V, found bool) V
}

// ValueUpdaterFunc adapts a function to ValueUpdater.
type ValueUpdaterFunc[V any] func(old V, found bool) V

// Update calls f.
func (f ValueUpdaterFunc[V]) Update(old V, found bool) V { return f(old, found) }

// Replace returns an updater that ignores the old value and returns v.
func Replace[V any](v V) ValueUpdater[V] { return replacer[V]{v} }

type replacer[V any] struct{ v V }

func (r replacer[V]) Update(V, bool) V { return r.v }

// Replacement reports whether u is a Replace updater and returns its value.
// Maps use it to skip decoding an old value nobody reads.
func Replacement[V any](u ValueUpdater[V]) (V, bool) {
	r, ok := u.(replacer[V])
	return r.v, ok
}

// Combiner merges two partial aggregates, as in a count or a sum. Combine
// must be associative.
type Combiner[V any] interface {
	Combine(a, b V) V
}

// CombinerFunc adapts a function to Combiner.
type CombinerFunc[V any] func(a, b V) V

// Combine calls f.
func (f CombinerFunc[V]) Combine(a, b V) V { return f(a, b) }

// Combine returns the updater of a combiner aggregation (Storm's
// CombinerValueUpdater): arg when the key has no value, else
// c.Combine(old, arg).
func Combine[V any](c Combiner[V], arg V) ValueUpdater[V] {
	return ValueUpdaterFunc[V](func(old V, found bool) V {
		if !found {
			return arg
		}
		return c.Combine(old, arg)
	})
}

// Reducer folds inputs into an aggregate, one input at a time.
type Reducer[V, In any] interface {
	// Init returns the aggregate of no input.
	Init() V
	// Reduce returns acc with in folded in. It may modify acc.
	Reduce(acc V, in In) V
}

// Reduce returns the updater of a reducer aggregation (Storm's
// ReducerValueUpdater): starting from the old value, or r.Init() when the
// key has none, it folds every input with r.Reduce.
func Reduce[V, In any](r Reducer[V, In], ins []In) ValueUpdater[V] {
	return ValueUpdaterFunc[V](func(old V, found bool) V {
		acc := old
		if !found {
			acc = r.Init()
		}
		for _, in := range ins {
			acc = r.Reduce(acc, in)
		}
		return acc
	})
}
