package ops

import "github.com/squallstream/squall/trident"

// Number is the constraint of Sum: the Go integer and floating-point
// types and the types defined over them.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr |
		~float32 | ~float64
}

// Sum returns a combiner that adds up the values of field as Ns, such as
// Sum[int64]("amount") or Sum[float64]("price").
//
// Values are converted to N as the package documentation describes: any
// integer that fits becomes an integer N, any number a float N, and a
// float is an error for an integer N. A nil value adds nothing. A value
// that does not convert is a *ValueError and its tuple is rejected; a
// missing field is a *FieldError (see the package documentation).
//
// Integer sums wrap around on overflow, like Go's + (and Storm's long
// sum). Float sums are associative only up to rounding: the same tuples
// combined in another grouping or order (a replay that shuffles them to
// other tasks, say) can differ in the last bits.
func Sum[N Number](field string) trident.CombinerAggregator[N] { return sum[N]{field: field} }

type sum[N Number] struct{ field string }

// Init returns the field's value as an N, or 0 for nil.
func (s sum[N]) Init(t trident.Tuple) (N, error) {
	v, err := lookup("Sum", t, s.field)
	if err != nil || v == nil {
		return 0, err
	}
	n, problem := convert[N](v)
	if problem != "" {
		return 0, badValue(&ValueError{Op: "Sum", Field: s.field, Value: v, Problem: problem})
	}
	return n, nil
}

// Combine returns a + b.
func (sum[N]) Combine(a, b N) N { return a + b }

// Zero returns 0.
func (sum[N]) Zero() N { return 0 }

// BorrowsTuples returns true: Sum keeps only numbers (trident.TupleBorrower).
func (sum[N]) BorrowsTuples() bool { return true }
