package arena

import (
	"fmt"
	"runtime"
	"testing"
)

func TestValuesAreDisjointAndClipped(t *testing.T) {
	var a Arena
	var slices [][]any
	for i := range 3 * ValuesChunk {
		v := a.Values(1 + i%3)
		if len(v) != cap(v) {
			t.Fatalf("Values(%d): len %d cap %d; want equal", 1+i%3, len(v), cap(v))
		}
		for j := range v {
			if v[j] != nil {
				t.Fatalf("Values returned a used slot: %v", v[j])
			}
			v[j] = i
		}
		slices = append(slices, v)
	}
	for i, v := range slices {
		for _, x := range v {
			if x != i {
				t.Fatalf("slice %d holds %v: slices overlap", i, x)
			}
		}
		_ = append(v, "grown") // must not write into the next slice
	}
	for i, v := range slices {
		if v[0] != i {
			t.Fatalf("slice %d changed after a neighbour grew", i)
		}
	}
	if big := a.Values(ValuesChunk); len(big) != ValuesChunk {
		t.Fatalf("Values(%d) has length %d", ValuesChunk, len(big))
	}
}

func TestStringsBoxLikeAny(t *testing.T) {
	var a Arena
	var boxed []any
	for i := range 3 * StringsChunk {
		boxed = append(boxed, a.String(fmt.Sprint("w", i)))
	}
	runtime.GC() // the boxes alone keep their chunks alive
	for i, v := range boxed {
		want := fmt.Sprint("w", i)
		s, ok := v.(string)
		if !ok || s != want || v != any(want) {
			t.Fatalf("box %d = %#v; want %q", i, v, want)
		}
		m := map[any]int{want: i}
		if m[v] != i {
			t.Fatalf("box %d does not hash like any(%q)", i, want)
		}
	}
	if v := a.String(""); v != any("") {
		t.Fatalf("empty string boxed as %#v", v)
	}
}

func TestStringAllocatesPerChunk(t *testing.T) {
	var a Arena
	allocs := testing.AllocsPerRun(1000, func() { _ = a.String("word") })
	if allocs > 0.01 {
		t.Fatalf("String allocates %.3f times per call; want one chunk per %d", allocs, StringsChunk)
	}
	allocs = testing.AllocsPerRun(1000, func() { _ = a.Values(2) })
	if allocs > 0.01 {
		t.Fatalf("Values allocates %.3f times per call; want one chunk per %d values", allocs, ValuesChunk)
	}
}
