package ops

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestCompareNumbers(t *testing.T) {
	const maxI = math.MaxInt64
	tests := []struct {
		a, b any
		want int
	}{
		{1, int64(1), 0},
		{int8(-1), uint64(0), -1},
		{uint64(math.MaxUint64), int64(maxI), 1},
		{uint64(math.MaxUint64), -1, 1},
		{uint8(200), int8(-100), 1},
		{1.5, 1, 1},
		{1.5, 2, -1},
		{2.0, 2, 0},
		{math.Copysign(0, -1), uint(0), 0}, // negative zero
		// float64(1<<53 + 1) rounds to 1<<53: the comparison must not.
		{float64(1 << 53), int64(1<<53 + 1), -1},
		{int64(1<<53 + 1), float64(1 << 53), 1},
		// float64(MaxInt64) is 2^63, which is larger than every int64.
		{float64(1 << 63), int64(maxI), 1},
		{-float64(1 << 63), int64(math.MinInt64), 0},
		{float64(1 << 64), uint64(math.MaxUint64), 1},
		{math.Inf(1), uint64(math.MaxUint64), 1},
		{math.Inf(-1), int64(math.MinInt64), -1},
		{math.NaN(), int64(math.MinInt64), -1},
		{math.NaN(), uint64(0), -1},
		{math.NaN(), math.Inf(-1), -1},
		{math.NaN(), math.NaN(), 0},
		{float32(0.5), 0.5, 0},
		{json.Number("10"), 9, 1},
		{json.Number("2.5"), 2.5, 0},
		{celsius(3), 3, 0},
	}
	for _, tc := range tests {
		na, oka := numberOf(tc.a)
		nb, okb := numberOf(tc.b)
		if !oka || !okb {
			t.Fatalf("numberOf(%v %T) or numberOf(%v %T) failed", tc.a, tc.a, tc.b, tc.b)
		}
		if got := compareNumbers(na, nb); got != tc.want {
			t.Errorf("compare(%v %T, %v %T) = %d, want %d", tc.a, tc.a, tc.b, tc.b, got, tc.want)
		}
		if got := compareNumbers(nb, na); got != -tc.want {
			t.Errorf("compare(%v %T, %v %T) = %d, want %d", tc.b, tc.b, tc.a, tc.a, got, -tc.want)
		}
	}
	for _, v := range []any{json.Number("x"), "1", true, nil, []byte("1")} {
		if _, ok := numberOf(v); ok {
			t.Errorf("numberOf(%v %T) is a number", v, v)
		}
	}
}

func TestEqualValues(t *testing.T) {
	x := 1
	tests := []struct {
		a, b any
		want bool
	}{
		{nil, nil, true},
		{nil, 0, false},
		{0, nil, false},
		{5, int64(5), true},
		{uint8(5), 5.0, true},
		{json.Number("5"), 5, true},
		{5, 6, false},
		{math.NaN(), math.NaN(), false},
		{5, "5", false},
		{"5", 5, false},
		{json.Number("5"), "5", false},
		{json.Number("x"), json.Number("x"), true},
		{"a", "a", true},
		{roomID("a"), "a", true},
		{"a", "b", false},
		{time.Unix(1, 0), time.Unix(1, 0).In(time.FixedZone("X", 7200)), true},
		{time.Unix(1, 0), time.Unix(2, 0), false},
		{time.Unix(1, 0), "1970", false},
		{[]byte("ab"), []byte("ab"), true},
		{[]byte("ab"), "ab", false},
		{true, true, true},
		{true, false, false},
		{[]int{1, 2}, []int{1, 2}, true},
		{[]int{1, 2}, []int{2, 1}, false},
		{map[string]int{"a": 1}, map[string]int{"a": 1}, true},
		{&x, &x, true},
		{reading{"a", 1}, reading{"a", 1}, true},
		{reading{"a", 1}, reading{"b", 1}, false},
	}
	for _, tc := range tests {
		if got := equalValues(tc.a, tc.b); got != tc.want {
			t.Errorf("equal(%v %T, %v %T) = %v, want %v", tc.a, tc.a, tc.b, tc.b, got, tc.want)
		}
	}
}

func TestConvertTable(t *testing.T) {
	_, problem := convert[int64](map[string]int{})
	if problem != "want int64" {
		t.Fatalf("problem %q", problem)
	}
	if v, problem := convert[uint8](int64(255)); v != 255 || problem != "" {
		t.Fatalf("convert[uint8](255) = %d, %q", v, problem)
	}
	if _, problem := convert[uint8](256); problem != "which is out of range of uint8" {
		t.Fatalf("problem %q", problem)
	}
	if v, problem := convert[float32](uint64(1 << 40)); v != 1<<40 || problem != "" {
		t.Fatalf("convert[float32](1<<40) = %v, %q", v, problem)
	}
	if _, problem := convert[string](json.Number("1")); problem != "want string" {
		t.Fatalf("a json.Number is a number, not a string: problem %q", problem)
	}
	if v, problem := convert[roomID]("r1"); v != "r1" || problem != "" {
		t.Fatalf("convert[roomID] = %q, %q", v, problem)
	}
}

// anyNumber draws numbers of many types, with floats near the places
// where float64 stops being exact for integers.
var anyNumber = rapid.Custom(func(t *rapid.T) any {
	switch rapid.IntRange(0, 7).Draw(t, "kind") {
	case 0:
		return rapid.Int64().Draw(t, "i")
	case 1:
		return rapid.Uint64().Draw(t, "u")
	case 2:
		return rapid.Int8().Draw(t, "i8")
	case 3:
		return rapid.Float64().Draw(t, "f")
	case 4: // a float next to an int64
		f := float64(rapid.Int64().Draw(t, "i"))
		for range rapid.IntRange(0, 2).Draw(t, "steps") {
			f = math.Nextafter(f, math.Inf(rapid.SampledFrom([]int{1, -1}).Draw(t, "dir")))
		}
		return f
	case 5: // a float next to a uint64
		return math.Nextafter(float64(rapid.Uint64().Draw(t, "u")), math.Inf(rapid.SampledFrom([]int{1, -1}).Draw(t, "dir")))
	case 6:
		return rapid.SampledFrom([]float64{0x1p53, 0x1p63, 0x1p64, -0x1p63, math.Inf(1), math.Inf(-1), math.NaN()}).Draw(t, "f")
	}
	return rapid.Int64Range(-5, 5).Draw(t, "small")
})

// ratOf returns n as an exact rational; infinities become ±2^2000.
func ratOf(n number) *big.Rat {
	switch n.kind {
	case kindInt:
		return new(big.Rat).SetInt64(n.i)
	case kindUint:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(n.u))
	}
	if math.IsInf(n.f, 0) {
		r := new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 2000))
		if n.f < 0 {
			r.Neg(r)
		}
		return r
	}
	return new(big.Rat).SetFloat64(n.f)
}
