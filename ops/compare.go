package ops

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"reflect"
	"time"
)

// equalValues reports whether a and b are the same value: numbers of any
// types by exact value (NaN equals nothing), strings of any string types
// by content, times as instants, byte slices by content, anything else by
// reflect.DeepEqual. nil equals only nil.
func equalValues(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if na, ok := numberOf(a); ok {
		nb, ok := numberOf(b)
		return ok && !na.isNaN() && !nb.isNaN() && compareNumbers(na, nb) == 0
	}
	if _, ok := numberOf(b); ok {
		return false
	}
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	if sa, ok := stringOf(a); ok {
		sb, ok := stringOf(b)
		return ok && sa == sb
	}
	return reflect.DeepEqual(a, b)
}

// stringOf returns the content of a value of a string type. A
// json.Number is a number, not a string.
func stringOf(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return "", false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.String {
		return "", false
	}
	return rv.String(), true
}

// number is a numeric value of any Go type, kept exactly.
type number struct {
	kind kind // kindInt, kindUint or kindFloat
	i    int64
	u    uint64
	f    float64
}

func (n number) isNaN() bool { return n.kind == kindFloat && math.IsNaN(n.f) }

// value returns n as an int64, uint64 or float64.
func (n number) value() any {
	switch n.kind {
	case kindInt:
		return n.i
	case kindUint:
		return n.u
	}
	return n.f
}

// numberOf returns v as a number if it is one: a value of an integer or
// float type (named or not) or a json.Number that parses.
func numberOf(v any) (number, bool) {
	switch x := v.(type) {
	case int:
		return number{kind: kindInt, i: int64(x)}, true
	case int64:
		return number{kind: kindInt, i: x}, true
	case int32:
		return number{kind: kindInt, i: int64(x)}, true
	case float64:
		return number{kind: kindFloat, f: x}, true
	case uint64:
		return number{kind: kindUint, u: x}, true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return number{kind: kindInt, i: i}, true
		}
		if f, err := x.Float64(); err == nil {
			return number{kind: kindFloat, f: f}, true
		}
		return number{}, false
	case nil:
		return number{}, false
	}
	rv := reflect.ValueOf(v)
	switch kindOf(rv.Kind()) {
	case kindInt:
		return number{kind: kindInt, i: rv.Int()}, true
	case kindUint:
		return number{kind: kindUint, u: rv.Uint()}, true
	case kindFloat:
		return number{kind: kindFloat, f: rv.Float()}, true
	}
	return number{}, false
}

// compareNumbers orders numbers by exact value, with NaN below every
// other number and equal to itself (as cmp.Compare does), so that the
// order is total.
func compareNumbers(a, b number) int {
	switch {
	case a.kind == kindFloat && b.kind == kindFloat:
		return cmp.Compare(a.f, b.f)
	case a.kind == kindFloat:
		return compareFloatInteger(a.f, b)
	case b.kind == kindFloat:
		return -compareFloatInteger(b.f, a)
	case a.kind == kindInt && b.kind == kindInt:
		return cmp.Compare(a.i, b.i)
	case a.kind == kindUint && b.kind == kindUint:
		return cmp.Compare(a.u, b.u)
	case a.kind == kindInt: // b is unsigned
		if a.i < 0 {
			return -1
		}
		return cmp.Compare(uint64(a.i), b.u)
	default: // a is unsigned, b signed
		if b.i < 0 {
			return 1
		}
		return cmp.Compare(a.u, uint64(b.i))
	}
}

// compareFloatInteger compares f with the integer n exactly, even where
// float64(n) rounds.
func compareFloatInteger(f float64, n number) int {
	if math.IsNaN(f) {
		return -1
	}
	var nf float64
	if n.kind == kindInt {
		nf = float64(n.i)
	} else {
		nf = float64(n.u)
	}
	// Rounding is monotonic, so f < round(n) implies f < n, and likewise
	// for >.
	if c := cmp.Compare(f, nf); c != 0 {
		return c
	}
	// f equals round(n), so f is a whole number within one rounding step
	// of n: compare as integers.
	if n.kind == kindInt {
		if f >= 0x1p63 {
			return 1
		}
		return cmp.Compare(int64(f), n.i)
	}
	if f >= 0x1p64 {
		return 1
	}
	return cmp.Compare(uint64(f), n.u)
}
