package ops

import (
	"encoding/json"
	"reflect"
)

// kind groups reflect kinds by how values convert and compare.
type kind uint8

const (
	kindOther kind = iota
	kindInt
	kindUint
	kindFloat
	kindString
)

func kindOf(k reflect.Kind) kind {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return kindUint
	case reflect.Float32, reflect.Float64:
		return kindFloat
	case reflect.String:
		return kindString
	}
	return kindOther
}

// convert returns the non-nil value v as a V, or a problem for a
// ValueError ("want int64", "which is out of range of int8") when v cannot
// become a V without changing its meaning:
//
//   - a V passes through;
//   - an integer (any width, signed or not, named or not) becomes an
//     integer V it fits in;
//   - an integer or a float becomes a float V it fits in (a large integer
//     may round);
//   - a float never becomes an integer V;
//   - a json.Number is read as an int64 if it is one, else a float64;
//   - a string type becomes a string V;
//   - nothing else converts.
func convert[V any](v any) (V, string) {
	if x, ok := v.(V); ok {
		return x, ""
	}
	var out V
	dst := reflect.ValueOf(&out).Elem()
	want := "want " + dst.Type().String()
	src := reflect.ValueOf(v)
	if n, ok := v.(json.Number); ok {
		num, ok := numberOf(n)
		if !ok {
			return out, "which is not a number; " + want
		}
		src = reflect.ValueOf(num.value())
	}
	outOfRange := "which is out of range of " + dst.Type().String()
	switch kindOf(dst.Kind()) {
	case kindInt:
		switch kindOf(src.Kind()) {
		case kindInt:
			i := src.Int()
			if dst.OverflowInt(i) {
				return out, outOfRange
			}
			dst.SetInt(i)
			return out, ""
		case kindUint:
			u := src.Uint()
			if u > 1<<63-1 || dst.OverflowInt(int64(u)) {
				return out, outOfRange
			}
			dst.SetInt(int64(u))
			return out, ""
		}
	case kindUint:
		switch kindOf(src.Kind()) {
		case kindInt:
			i := src.Int()
			if i < 0 || dst.OverflowUint(uint64(i)) {
				return out, outOfRange
			}
			dst.SetUint(uint64(i))
			return out, ""
		case kindUint:
			u := src.Uint()
			if dst.OverflowUint(u) {
				return out, outOfRange
			}
			dst.SetUint(u)
			return out, ""
		}
	case kindFloat:
		switch kindOf(src.Kind()) {
		case kindInt:
			dst.SetFloat(float64(src.Int()))
			return out, ""
		case kindUint:
			dst.SetFloat(float64(src.Uint()))
			return out, ""
		case kindFloat:
			f := src.Float()
			if dst.OverflowFloat(f) {
				return out, outOfRange
			}
			dst.SetFloat(f)
			return out, ""
		}
	case kindString:
		if _, isNumber := v.(json.Number); !isNumber && src.Kind() == reflect.String {
			dst.SetString(src.String())
			return out, ""
		}
	}
	return out, want
}
