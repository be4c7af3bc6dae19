package ops

import (
	"cmp"
	"reflect"
	"time"

	"github.com/squallstream/squall/trident"
)

// Ordered is the constraint of Min and Max: the types cmp.Ordered allows,
// and time.Time.
type Ordered interface {
	cmp.Ordered | time.Time
}

// Min returns a combiner that keeps the smallest value of field as a V,
// such as Min[int64]("age"), Min[string]("name") or
// Min[time.Time]("at"). Its aggregate is a *V: nil (Zero) until a tuple
// with a non-nil value is seen.
//
// Values are converted to V as the package documentation describes, so
// Min[int64] takes ints, uint16s and int64s alike, and a string in a
// Min[int64] is a *ValueError: a combiner can only compare values of one
// type, and the conversion happens where an error can still be returned.
// A nil value is skipped. Floats are ordered by cmp.Compare (NaN first);
// times as instants. Among equal values the earlier (left) one is kept.
func Min[V Ordered](field string) trident.CombinerAggregator[*V] {
	return &extreme[V]{op: "Min", field: field, cmp: orderOf[V]()}
}

// Max is Min for the largest value.
func Max[V Ordered](field string) trident.CombinerAggregator[*V] {
	return &extreme[V]{op: "Max", field: field, cmp: orderOf[V](), max: true}
}

// MinBy is Min with an order of your own: cmp(a, b) is negative when a
// comes before b, zero when they tie and positive otherwise, and must be
// a total order, as for slices.SortFunc. V is any type; values are
// converted to it as for Min. It panics if cmp is nil.
func MinBy[V any](field string, cmp func(a, b V) int) trident.CombinerAggregator[*V] {
	if cmp == nil {
		panic("ops: MinBy: nil comparison")
	}
	return &extreme[V]{op: "MinBy", field: field, cmp: cmp}
}

// MaxBy is MinBy for the largest value.
func MaxBy[V any](field string, cmp func(a, b V) int) trident.CombinerAggregator[*V] {
	if cmp == nil {
		panic("ops: MaxBy: nil comparison")
	}
	return &extreme[V]{op: "MaxBy", field: field, cmp: cmp, max: true}
}

// extreme keeps the smallest or largest value.
type extreme[V any] struct {
	op    string
	field string
	cmp   func(a, b V) int
	max   bool
}

// Init returns the field's value as a *V, or nil for nil.
func (e *extreme[V]) Init(t trident.Tuple) (*V, error) {
	v, err := lookup(e.op, t, e.field)
	if err != nil || v == nil {
		return nil, err
	}
	x, problem := convert[V](v)
	if problem != "" {
		return nil, badValue(&ValueError{Op: e.op, Field: e.field, Value: v, Problem: problem})
	}
	return &x, nil
}

// Combine returns the smaller (Min) or larger (Max) of a and b, a on a
// tie; nil is no value.
func (e *extreme[V]) Combine(a, b *V) *V {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	c := e.cmp(*a, *b)
	if e.max {
		c = -c
	}
	if c <= 0 {
		return a
	}
	return b
}

// Zero returns nil.
func (e *extreme[V]) Zero() *V { return nil }

// BorrowsTuples reports whether the values kept are copies: true unless V
// is an interface type, whose values would be the tuple's own
// (trident.TupleBorrower).
func (e *extreme[V]) BorrowsTuples() bool { return reflect.TypeFor[V]().Kind() != reflect.Interface }

// orderOf returns the natural order of V.
func orderOf[V Ordered]() func(a, b V) int {
	var zero V
	switch any(zero).(type) {
	case time.Time:
		return func(a, b V) int { return any(a).(time.Time).Compare(any(b).(time.Time)) }
	case int:
		return compareAs[V, int]
	case int8:
		return compareAs[V, int8]
	case int16:
		return compareAs[V, int16]
	case int32:
		return compareAs[V, int32]
	case int64:
		return compareAs[V, int64]
	case uint:
		return compareAs[V, uint]
	case uint8:
		return compareAs[V, uint8]
	case uint16:
		return compareAs[V, uint16]
	case uint32:
		return compareAs[V, uint32]
	case uint64:
		return compareAs[V, uint64]
	case uintptr:
		return compareAs[V, uintptr]
	case float32:
		return compareAs[V, float32]
	case float64:
		return compareAs[V, float64]
	case string:
		return compareAs[V, string]
	}
	return compareByKind[V] // a type defined over one of the above
}

func compareAs[V any, T cmp.Ordered](a, b V) int { return cmp.Compare(any(a).(T), any(b).(T)) }

func compareByKind[V any](a, b V) int {
	x, y := reflect.ValueOf(a), reflect.ValueOf(b)
	switch kindOf(x.Kind()) {
	case kindInt:
		return cmp.Compare(x.Int(), y.Int())
	case kindUint:
		return cmp.Compare(x.Uint(), y.Uint())
	case kindFloat:
		return cmp.Compare(x.Float(), y.Float())
	default:
		return cmp.Compare(x.String(), y.String())
	}
}
