package ops

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/squallstream/squall/trident"
)

// checkLaws checks what the runtime relies on when it pre-aggregates a
// batch per partition and combines with stored state: Combine is
// associative and Zero is its identity on both sides.
func checkLaws[V any](t *rapid.T, agg trident.CombinerAggregator[V], gen *rapid.Generator[V], eq func(a, b V) bool) {
	a, b, c := gen.Draw(t, "a"), gen.Draw(t, "b"), gen.Draw(t, "c")
	if l, r := agg.Combine(agg.Combine(a, b), c), agg.Combine(a, agg.Combine(b, c)); !eq(l, r) {
		t.Fatalf("(a+b)+c = %v, a+(b+c) = %v", l, r)
	}
	if x := agg.Combine(agg.Zero(), a); !eq(x, a) {
		t.Fatalf("Zero+a = %v, want a = %v", x, a)
	}
	if x := agg.Combine(a, agg.Zero()); !eq(x, a) {
		t.Fatalf("a+Zero = %v, want a = %v", x, a)
	}
}

func eqv[V comparable](a, b V) bool { return a == b }

func TestCombinerLaws(t *testing.T) {
	exactFloat := rapid.Map(rapid.Int64Range(-1<<40, 1<<40), func(i int64) float64 { return float64(i) / 4 })
	maybeInt := rapid.Ptr(rapid.Int64(), true)
	maybeString := rapid.Ptr(rapid.String(), true)
	maybeReading := rapid.Ptr(rapid.Custom(func(t *rapid.T) reading {
		return reading{room: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "room"), temp: rapid.IntRange(0, 3).Draw(t, "temp")}
	}), true)
	t.Run("Count", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Count{}, rapid.Int64(), eqv) }))
	t.Run("Sum int64 (wrapping)", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Sum[int64]("x"), rapid.Int64(), eqv) }))
	t.Run("Sum uint8 (wrapping)", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Sum[uint8]("x"), rapid.Uint8(), eqv) }))
	t.Run("Sum float64 (exact values)", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Sum[float64]("x"), exactFloat, eqv) }))
	t.Run("Min int64", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Min[int64]("x"), maybeInt, equalPtr) }))
	t.Run("Max int64", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Max[int64]("x"), maybeInt, equalPtr) }))
	t.Run("Min string", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Min[string]("x"), maybeString, equalPtr) }))
	t.Run("Max string", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, Max[string]("x"), maybeString, equalPtr) }))
	// With ties the kept element must not depend on the grouping either:
	// readings with equal temperatures differ by room.
	t.Run("MinBy with ties", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, MinBy("x", byTemp), maybeReading, equalPtr) }))
	t.Run("MaxBy with ties", rapid.MakeCheck(func(t *rapid.T) { checkLaws(t, MaxBy("x", byTemp), maybeReading, equalPtr) }))
}

// mixedInt draws a value of a random integer type, or nil.
var mixedInt = rapid.Custom(func(t *rapid.T) any {
	switch rapid.IntRange(0, 7).Draw(t, "type") {
	case 0:
		return rapid.Int8().Draw(t, "v")
	case 1:
		return rapid.Int16().Draw(t, "v")
	case 2:
		return rapid.Int32().Draw(t, "v")
	case 3:
		return rapid.Int64().Draw(t, "v")
	case 4:
		return rapid.Int().Draw(t, "v")
	case 5:
		return rapid.Uint32().Draw(t, "v")
	case 6:
		return rapid.Uint64Max(1<<63-1).Draw(t, "v")
	}
	return nil
})

// TestPartialAggregatesMatchModel splits random input of mixed integer
// types into partitions, aggregates each, combines the partials in order
// and compares with a direct computation: what a partitioned stream
// followed by state combination computes.
func TestPartialAggregatesMatchModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		values := rapid.SliceOf(mixedInt).Draw(t, "values")
		cuts := rapid.SliceOfN(rapid.IntRange(0, len(values)), 0, 4).Draw(t, "cuts")
		var sum int64
		var lo, hi *int64
		for _, v := range values {
			if v == nil {
				continue
			}
			n, _ := numberOf(v)
			i := int64(n.u)
			if n.kind == kindInt {
				i = n.i
			}
			sum += i
			if lo == nil || i < *lo {
				lo = ptr(i)
			}
			if hi == nil || i > *hi {
				hi = ptr(i)
			}
		}
		gotSum := partials(t, Sum[int64]("x"), values, cuts)
		gotMin := partials(t, Min[int64]("x"), values, cuts)
		gotMax := partials(t, Max[int64]("x"), values, cuts)
		gotCount := partials(t, Count{}, values, cuts)
		if gotSum != sum || !equalPtr(gotMin, lo) || !equalPtr(gotMax, hi) || gotCount != int64(len(values)) {
			t.Fatalf("sum %d min %v max %v count %d; want %d %v %v %d",
				gotSum, show(gotMin), show(gotMax), gotCount, sum, show(lo), show(hi), len(values))
		}
	})
}

// partials folds values split at cuts, then combines the parts.
func partials[V any](t *rapid.T, agg trident.CombinerAggregator[V], values []any, cuts []int) V {
	bounds := append([]int{0}, cuts...)
	bounds = append(bounds, len(values))
	total := agg.Zero()
	lo := 0
	for _, hi := range bounds[1:] {
		if hi < lo {
			continue
		}
		part, err := fold(agg, tuplesOf("x", values[lo:hi])...)
		if err != nil {
			t.Fatal(err)
		}
		total = agg.Combine(total, part)
		lo = hi
	}
	rest, err := fold(agg, tuplesOf("x", values[lo:])...)
	if err != nil {
		t.Fatal(err)
	}
	return agg.Combine(total, rest)
}

// TestCompareNumbersIsATotalOrder checks the exact mixed comparison used
// by FirstN and Equals against ordering by big rationals.
func TestCompareNumbersIsATotalOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := anyNumber.Draw(t, "a"), anyNumber.Draw(t, "b")
		na, _ := numberOf(a)
		nb, _ := numberOf(b)
		got := compareNumbers(na, nb)
		if back := compareNumbers(nb, na); back != -got {
			t.Fatalf("compare(a, b) = %d but compare(b, a) = %d", got, back)
		}
		if na.isNaN() || nb.isNaN() {
			return // NaN's place is checked by the table test
		}
		if want := ratOf(na).Cmp(ratOf(nb)); got != want {
			t.Fatalf("compare(%v %T, %v %T) = %d, want %d", a, a, b, b, got, want)
		}
	})
}
