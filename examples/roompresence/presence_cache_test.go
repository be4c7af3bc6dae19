package main

import (
	"testing"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
)

// TestWrittenHalves: a remembered half completes its visit's other half,
// a completed visit is forgotten, the size bounds what is remembered and
// size 0 remembers nothing.
func TestWrittenHalves(t *testing.T) {
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	enter := func(v string) room.Period { return room.Period{Visit: v, Room: "r", Person: "p", Start: at} }
	leave := func(v string) room.Period {
		return room.Period{Visit: v, Room: "r", Person: "p", End: at.Add(time.Hour)}
	}

	w := newWrittenHalves(2)
	if _, ok := w.written(enter("a")); ok {
		t.Fatal("a lone ENTER is complete")
	}
	p, ok := w.written(leave("a"))
	if !ok || !p.Start.Equal(at) || !p.End.Equal(at.Add(time.Hour)) {
		t.Fatalf("ENTER then LEAVE: %+v, %v", p, ok)
	}
	if w.Len() != 0 {
		t.Fatalf("a complete visit is still remembered (%d)", w.Len())
	}
	// The other order, and a whole visit at once.
	w.written(leave("b"))
	if p, ok := w.written(enter("b")); !ok || !p.End.Equal(at.Add(time.Hour)) {
		t.Fatalf("LEAVE then ENTER: %+v, %v", p, ok)
	}
	whole := enter("c")
	whole.End = at.Add(time.Minute)
	if _, ok := w.written(whole); !ok || w.Len() != 0 {
		t.Fatalf("a whole visit: %v, %d remembered", ok, w.Len())
	}
	// Size 2: the least recently written of three open visits is evicted.
	w.written(enter("d"))
	w.written(enter("e"))
	w.written(enter("f"))
	if _, ok := w.written(leave("d")); ok {
		t.Fatal("an evicted visit completed")
	}
	if _, ok := w.written(leave("f")); !ok {
		t.Fatal("a remembered visit did not complete")
	}
	// Size 0: nothing is remembered.
	none := newWrittenHalves(0)
	none.written(enter("a"))
	if _, ok := none.written(leave("a")); ok || none.Len() != 0 {
		t.Fatal("size 0 remembered a half")
	}
}
