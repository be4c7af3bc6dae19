package transport

import (
	"fmt"
	"strings"
	"testing"
)

// TestStringCache: every string decodes to itself, whether it is cached,
// replaced by a colliding one, or too long to cache, and a cached string
// shares nothing with the frame it came from.
func TestStringCache(t *testing.T) {
	var vals []any
	for i := range 3 * stringCacheSize {
		vals = append(vals, fmt.Sprint("w", i%(2*stringCacheSize)))
	}
	vals = append(vals, "", strings.Repeat("x", maxCachedString), strings.Repeat("y", maxCachedString+1))
	d := newDecoder(nil)
	for round := range 3 {
		frame, err := appendFrame(newEncoder(nil), nil, []Message{{Kind: KindTuple, Values: vals}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.frame(frame[lenPrefix:], nil)
		if err != nil {
			t.Fatal(err)
		}
		clear(frame)
		for i, v := range got[0].Values {
			if v != vals[i] {
				t.Fatalf("round %d: value %d is %q, want %q", round, i, v, vals[i])
			}
		}
	}
}

// BenchmarkDecodeDistinctStrings: one op decodes a frame of 256 tuples
// whose string value is different in every message, the string cache's
// worst case (every lookup misses).
func BenchmarkDecodeDistinctStrings(b *testing.B) {
	d := newDecoder(nil)
	msgs := make([]Message, 256)
	frames := make([][]byte, 16)
	for f := range frames {
		for i := range msgs {
			msgs[i] = Message{Kind: KindTuple, Task: 1, Stream: "default",
				Values: []any{fmt.Sprintf("word-%d-%d", f, i)}, Anchors: []Anchor{{Root: 1, Edge: 2}}}
		}
		frame, err := appendFrame(newEncoder(nil), nil, msgs)
		if err != nil {
			b.Fatal(err)
		}
		frames[f] = frame[lenPrefix:]
	}
	out := make([]Message, 0, len(msgs))
	b.ReportAllocs()
	var err error
	for i := 0; b.Loop(); i++ {
		if out, err = d.frame(frames[i%len(frames)], out[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
}
