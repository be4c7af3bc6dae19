package ops

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

type cents int64

func TestSumInt64(t *testing.T) {
	tests := []struct {
		name    string
		values  []any
		want    int64
		wantErr string
	}{
		{"empty is Zero", nil, 0, ""},
		{"ints", []any{1, 2, 3}, 6, ""},
		{"mixed integer types", []any{int8(-3), int16(300), int32(70000), int64(1 << 40), uint8(7), uint16(9), uint32(11), uint64(13), uint(15), 17},
			-3 + 300 + 70000 + 1<<40 + 7 + 9 + 11 + 13 + 15 + 17, ""},
		{"named integer type", []any{cents(250), 50}, 300, ""},
		{"json numbers", []any{json.Number("12"), json.Number("-2")}, 10, ""},
		{"nil adds nothing", []any{5, nil, 7}, 12, ""},
		{"only nils", []any{nil, nil}, 0, ""},
		{"wraps on overflow", []any{int64(math.MaxInt64), 1}, math.MinInt64, ""},
		{"string", []any{1, "ten"},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds string "ten", want int64`},
		{"float", []any{2.5},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds float64 2.5, want int64`},
		{"whole float is still a float", []any{2.0},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds float64 2, want int64`},
		{"uint64 too large", []any{uint64(math.MaxUint64)},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds uint64 18446744073709551615, which is out of range of int64`},
		{"json float", []any{json.Number("1.5")},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds json.Number 1.5, want int64`},
		{"json garbage", []any{json.Number("x1")},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds json.Number x1, which is not a number; want int64`},
		{"bool", []any{true},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds bool true, want int64`},
		{"slice", []any{[]int{1}},
			0, `trident: tuple rejected: ops: Sum: field "amount" holds []int [1], want int64`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tuples := tuplesOf("amount", tc.values)
			got, err := fold(Sum[int64]("amount"), tuples...)
			checkErr(t, err, tc.wantErr)
			if err != nil {
				checkBadValue(t, err)
				return
			}
			if got != tc.want {
				t.Fatalf("sum = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSumFloat64(t *testing.T) {
	tests := []struct {
		name    string
		values  []any
		want    float64
		wantErr string
	}{
		{"empty is Zero", nil, 0, ""},
		{"mixed ints and floats", []any{1, 2.5, float32(0.25), uint8(4), int64(-1)}, 6.75, ""},
		{"json numbers", []any{json.Number("1"), json.Number("0.5")}, 1.5, ""},
		{"nil adds nothing", []any{nil, 1.5}, 1.5, ""},
		{"string", []any{"1.5"},
			0, `trident: tuple rejected: ops: Sum: field "price" holds string "1.5", want float64`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fold(Sum[float64]("price"), tuplesOf("price", tc.values)...)
			checkErr(t, err, tc.wantErr)
			if err == nil && got != tc.want {
				t.Fatalf("sum = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSumNarrowTypes(t *testing.T) {
	tests := []struct {
		name    string
		run     func() (any, error)
		want    any
		wantErr string
	}{
		{"int8 in range", func() (any, error) { return fold(Sum[int8]("n"), tuplesOf("n", []any{100, int64(27)})...) }, int8(127), ""},
		{"int8 value out of range", func() (any, error) { return fold(Sum[int8]("n"), tuplesOf("n", []any{200})...) },
			nil, `trident: tuple rejected: ops: Sum: field "n" holds int 200, which is out of range of int8`},
		{"uint32 negative", func() (any, error) { return fold(Sum[uint32]("n"), tuplesOf("n", []any{-1})...) },
			nil, `trident: tuple rejected: ops: Sum: field "n" holds int -1, which is out of range of uint32`},
		{"uint64 negative", func() (any, error) { return fold(Sum[uint64]("n"), tuplesOf("n", []any{int64(-5)})...) },
			nil, `trident: tuple rejected: ops: Sum: field "n" holds int64 -5, which is out of range of uint64`},
		{"uint32 from unsigned", func() (any, error) { return fold(Sum[uint32]("n"), tuplesOf("n", []any{uint64(3), uint8(4)})...) }, uint32(7), ""},
		{"float32 too large", func() (any, error) { return fold(Sum[float32]("n"), tuplesOf("n", []any{1e300})...) },
			nil, `trident: tuple rejected: ops: Sum: field "n" holds float64 1e+300, which is out of range of float32`},
		{"named result type", func() (any, error) { return fold(Sum[cents]("n"), tuplesOf("n", []any{1, cents(2), uint8(3)})...) }, cents(6), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.run()
			checkErr(t, err, tc.wantErr)
			if err == nil && got != tc.want {
				t.Fatalf("sum = %v (%T), want %v (%T)", got, got, tc.want, tc.want)
			}
		})
	}
}

func TestSumMissingField(t *testing.T) {
	_, err := Sum[int64]("amount").Init(tup("word", "the"))
	checkErr(t, err, `ops: Sum: tuple with fields [word] has no field "amount"`)
	var fe *FieldError
	if !errors.Is(err, ErrNoField) || !errors.As(err, &fe) || fe.Field != "amount" {
		t.Fatalf("error %v is not a *FieldError for amount", err)
	}
	if errors.Is(err, ErrBadValue) {
		t.Fatal("a missing field must not be a bad value (it would be rejected)")
	}
}
