package ops

import (
	"cmp"
	"math"
	"testing"
	"time"

	"github.com/squallstream/squall/trident"
)

type celsius float64

func TestMinMaxInt64(t *testing.T) {
	tests := []struct {
		name     string
		values   []any
		min, max *int64
		wantErr  string
	}{
		{"empty is Zero (nil)", nil, nil, nil, ""},
		{"one", []any{5}, ptr[int64](5), ptr[int64](5), ""},
		{"mixed integer types", []any{int8(-3), uint16(300), 7, int64(-1 << 40), uint64(1 << 50)},
			ptr[int64](-1 << 40), ptr[int64](1 << 50), ""},
		{"nil is skipped", []any{nil, 4, nil, 2}, ptr[int64](2), ptr[int64](4), ""},
		{"only nils", []any{nil, nil}, nil, nil, ""},
		{"string", []any{1, "a"}, nil, nil, `ops: %s: field "x" holds string "a", want int64`},
		{"float", []any{1.5}, nil, nil, `ops: %s: field "x" holds float64 1.5, want int64`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				op   string
				agg  trident.CombinerAggregator[*int64]
				want *int64
			}{{"Min", Min[int64]("x"), tc.min}, {"Max", Max[int64]("x"), tc.max}} {
				got, err := fold(c.agg, tuplesOf("x", tc.values)...)
				if tc.wantErr != "" {
					checkErr(t, err, "trident: tuple rejected: "+sprintf(tc.wantErr, c.op))
					checkBadValue(t, err)
					continue
				}
				checkErr(t, err, "")
				if !equalPtr(got, c.want) {
					t.Fatalf("%s = %v, want %v", c.op, show(got), show(c.want))
				}
			}
		})
	}
}

func TestMinMaxOtherTypes(t *testing.T) {
	utc := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	tests := []struct {
		name     string
		min, max trident.CombinerAggregator[any]
		values   []any
		wantMin  any
		wantMax  any
		wantErr  string
	}{
		{"float64 from mixed numbers", erase(Min[float64]("x")), erase(Max[float64]("x")),
			[]any{2, float32(-0.5), uint8(9), 3.25}, -0.5, 9.0, ""},
		{"float64 NaN sorts first", erase(Min[float64]("x")), erase(Max[float64]("x")),
			[]any{1.0, math.NaN(), 2.0}, math.NaN(), 2.0, ""},
		{"strings", erase(Min[string]("x")), erase(Max[string]("x")),
			[]any{"pear", "apple", "zucchini"}, "apple", "zucchini", ""},
		{"string from a named string type", erase(Min[string]("x")), erase(Max[string]("x")),
			[]any{"b", roomID("a")}, "a", "b", ""},
		{"times compare as instants", erase(Min[time.Time]("x")), erase(Max[time.Time]("x")),
			[]any{utc, utc.Add(-time.Hour).In(paris), utc.Add(time.Minute)}, utc.Add(-time.Hour).In(paris), utc.Add(time.Minute), ""},
		{"named numeric type", erase(Min[celsius]("x")), erase(Max[celsius]("x")),
			[]any{celsius(21.5), -4, 30.0}, celsius(-4), celsius(30), ""},
		{"time wants time.Time", erase(Min[time.Time]("x")), erase(Max[time.Time]("x")),
			[]any{"2026-03-01"}, nil, nil, `holds string "2026-03-01", want time.Time`},
		{"string wants a string", erase(Min[string]("x")), erase(Max[string]("x")),
			[]any{"a", 1}, nil, nil, `holds int 1, want string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				op   string
				agg  trident.CombinerAggregator[any]
				want any
			}{{"Min", tc.min, tc.wantMin}, {"Max", tc.max, tc.wantMax}} {
				got, err := fold(c.agg, tuplesOf("x", tc.values)...)
				if tc.wantErr != "" {
					checkErr(t, err, "trident: tuple rejected: ops: "+c.op+`: field "x" `+tc.wantErr)
					continue
				}
				checkErr(t, err, "")
				if !sameValue(got, c.want) {
					t.Fatalf("%s = %v (%T), want %v (%T)", c.op, got, got, c.want, c.want)
				}
			}
		})
	}
}

type roomID string

type reading struct {
	room string
	temp int
}

func byTemp(a, b reading) int { return cmp.Compare(a.temp, b.temp) }

func TestMinByMaxBy(t *testing.T) {
	rs := []any{reading{"a", 20}, reading{"b", 18}, reading{"c", 25}, reading{"d", 18}, reading{"e", 25}}
	tests := []struct {
		name string
		agg  trident.CombinerAggregator[*reading]
		in   []any
		want *reading
	}{
		{"MinBy keeps the first of equals", MinBy("r", byTemp), rs, &reading{"b", 18}},
		{"MaxBy keeps the first of equals", MaxBy("r", byTemp), rs, &reading{"c", 25}},
		{"MinBy of nothing", MinBy("r", byTemp), nil, nil},
		{"MinBy skips nil", MinBy("r", byTemp), []any{nil, reading{"x", 1}}, &reading{"x", 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fold(tc.agg, tuplesOf("r", tc.in)...)
			checkErr(t, err, "")
			if !equalPtr(got, tc.want) {
				t.Fatalf("got %v, want %v", show(got), show(tc.want))
			}
		})
	}
	_, err := MinBy("r", byTemp).Init(tup("r", "hot"))
	checkErr(t, err, `trident: tuple rejected: ops: MinBy: field "r" holds string "hot", want ops.reading`)
	_, err = MaxBy("r", byTemp).Init(tup("q", 1))
	checkErr(t, err, `ops: MaxBy: tuple with fields [q] has no field "r"`)

	// MinBy over a numeric type converts like Min.
	got, err := fold(MinBy("n", cmp.Compare[int64]), tuplesOf("n", []any{uint8(3), int16(-2)})...)
	if err != nil || got == nil || *got != -2 {
		t.Fatalf("MinBy over int64 = %v, %v; want -2", show(got), err)
	}
}

func TestMinByNilComparisonPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"MinBy": func() { MinBy[int]("x", nil) },
		"MaxBy": func() { MaxBy[int]("x", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}

func TestMinMaxCombineDoesNotModifyArguments(t *testing.T) {
	a, b := ptr[int64](1), ptr[int64](2)
	for _, agg := range []trident.CombinerAggregator[*int64]{Min[int64]("x"), Max[int64]("x")} {
		agg.Combine(a, b)
		agg.Combine(b, a)
		if *a != 1 || *b != 2 {
			t.Fatalf("arguments modified: %d, %d", *a, *b)
		}
		if agg.Combine(nil, a) != a || agg.Combine(a, nil) != a || agg.Zero() != nil {
			t.Fatal("nil is not the identity")
		}
	}
}

// erased runs a CombinerAggregator[*V] as one over any, so that one
// table can hold aggregators of several value types.
type erased[V any] struct {
	agg trident.CombinerAggregator[*V]
}

func erase[V any](agg trident.CombinerAggregator[*V]) trident.CombinerAggregator[any] {
	return erased[V]{agg}
}

func (e erased[V]) Init(t trident.Tuple) (any, error) {
	v, err := e.agg.Init(t)
	return v, err
}

func (e erased[V]) Combine(a, b any) any { return e.agg.Combine(a.(*V), b.(*V)) }
func (e erased[V]) Zero() any            { return e.agg.Zero() }

// sameValue compares a *V from an erased aggregator with a plain value;
// NaN matches NaN and times match as instants with the same location.
func sameValue(got, want any) bool {
	if want == nil {
		return got == nil || isNil(got)
	}
	switch g := got.(type) {
	case *float64:
		w := want.(float64)
		return *g == w || math.IsNaN(*g) && math.IsNaN(w)
	case *string:
		return *g == want.(string)
	case *time.Time:
		w := want.(time.Time)
		return g.Equal(w) && g.Location() == w.Location()
	case *celsius:
		return *g == want.(celsius)
	}
	return false
}
