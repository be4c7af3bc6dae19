package ops

import (
	"context"
	"reflect"
	"slices"

	"github.com/squallstream/squall/trident"
)

// Equals returns a filter that keeps the tuples whose named fields all
// hold the same value; with no fields, the tuples whose values are all the
// same. A tuple with fewer than two values to compare is kept.
//
// Numbers are equal when their values are, whatever their types (int 5,
// uint8 5 and float64 5.0 are equal; NaN equals nothing); strings of any
// string types by content; time.Times when they are the same instant;
// byte slices by content; anything else by reflect.DeepEqual. nil equals
// only nil. A missing field is a *FieldError.
func Equals(fields ...string) trident.Filter { return equals{fields: slices.Clone(fields)} }

type equals struct{ fields []string }

func (e equals) Keep(_ context.Context, t trident.Tuple) (bool, error) {
	vals, err := values("Equals", t, e.fields)
	if err != nil {
		return false, err
	}
	for _, v := range vals[min(1, len(vals)):] {
		if !equalValues(vals[0], v) {
			return false, nil
		}
	}
	return true, nil
}

// FilterNull returns a filter that drops the tuples in which any of the
// named fields is nil (or a nil pointer); with no fields, the tuples with
// any nil value. A missing field is a *FieldError.
func FilterNull(fields ...string) trident.Filter { return filterNull{fields: slices.Clone(fields)} }

type filterNull struct{ fields []string }

func (f filterNull) Keep(_ context.Context, t trident.Tuple) (bool, error) {
	vals, err := values("FilterNull", t, f.fields)
	if err != nil {
		return false, err
	}
	return !slices.ContainsFunc(vals, isNil), nil
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// Negate returns a filter that keeps what f drops and drops what f keeps.
// f's errors are returned as they are. It panics if f is nil.
func Negate(f trident.Filter) trident.Filter {
	if f == nil {
		panic("ops: Negate: nil filter")
	}
	return negate{f: f}
}

type negate struct{ f trident.Filter }

func (n negate) Keep(ctx context.Context, t trident.Tuple) (bool, error) {
	keep, err := n.f.Keep(ctx, t)
	if err != nil {
		return false, err
	}
	return !keep, nil
}

// values returns the named values of t, or all of them when fields is
// empty. Every field is looked up, so a wiring mistake shows on the first
// tuple whatever its values.
func values(op string, t trident.Tuple, fields []string) ([]any, error) {
	if len(fields) == 0 {
		return t.Values(), nil
	}
	out := make([]any, len(fields))
	for i, f := range fields {
		v, err := lookup(op, t, f)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
