package arena

import (
	"fmt"
	"runtime"
	"testing"
)

func TestSlicesAreDisjointAndClipped(t *testing.T) {
	var a Slices[any]
	var slices [][]any
	for i := range 3 * DefaultChunk {
		v := a.Take(1 + i%3)
		if len(v) != cap(v) {
			t.Fatalf("Take(%d): len %d cap %d; want equal", 1+i%3, len(v), cap(v))
		}
		for j := range v {
			if v[j] != nil {
				t.Fatalf("Take returned a used slot: %v", v[j])
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
	if big := a.Take(DefaultChunk); len(big) != DefaultChunk {
		t.Fatalf("Take(%d) has length %d", DefaultChunk, len(big))
	}
	small := Slices[int]{Chunk: 16}
	if v := small.Take(3); len(v) != 3 || len(small.free) != 13 {
		t.Fatalf("a chunk of 16: Take(3) = %d values, %d left in the chunk; want 3 and 13", len(v), len(small.free))
	}
	if v := small.Take(20); len(v) != 20 || len(small.free) != 0 {
		t.Fatalf("a chunk of 16: Take(20) = %d values, %d left; want a chunk of 20 all taken", len(v), len(small.free))
	}
}

func TestStringsBoxLikeAny(t *testing.T) {
	var a Strings
	var boxed []any
	for i := range 3 * StringsChunk {
		boxed = append(boxed, a.Box(fmt.Sprint("w", i)))
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
	if v := a.Box(""); v != any("") {
		t.Fatalf("empty string boxed as %#v", v)
	}
}

func TestAllocatesPerChunk(t *testing.T) {
	var strs Strings
	allocs := testing.AllocsPerRun(1000, func() { _ = strs.Box("word") })
	if allocs > 0.01 {
		t.Fatalf("Box allocates %.3f times per call; want one chunk per %d", allocs, StringsChunk)
	}
	var vals Slices[any]
	allocs = testing.AllocsPerRun(1000, func() { _ = vals.Take(2) })
	if allocs > 0.01 {
		t.Fatalf("Take allocates %.3f times per call; want one chunk per %d values", allocs, DefaultChunk)
	}
}

func TestSlotBoxesInPlace(t *testing.T) {
	var sl Slot
	first := sl.Box("first")
	if s, ok := first.(string); !ok || s != "first" || first != any("first") {
		t.Fatalf("Box(%q) = %#v", "first", first)
	}
	second := sl.Box("second")
	if first != "second" || second != "second" {
		t.Fatalf("after a second Box: %#v and %#v; want both to read the slot's \"second\"", first, second)
	}
	if allocs := testing.AllocsPerRun(1000, func() { _ = sl.Box("word") }); allocs != 0 {
		t.Fatalf("Slot.Box allocates %.1f times per call; want 0", allocs)
	}
}
