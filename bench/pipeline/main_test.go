package main

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/squallstream/squall/examples/roompresence/room"
)

// TestBatches cuts partitions as the pipeline's spout does: the next per
// records of each partition, in partition order, a batch.
func TestBatches(t *testing.T) {
	r := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i, v := range s {
			out[i] = []byte(v)
		}
		return out
	}
	got := batches([][][]byte{r("a1", "a2", "a3"), nil, r("c1")}, 2)
	want := [][][]byte{r("a1", "a2", "c1"), r("a3")}
	if !slices.EqualFunc(got, want, func(a, b [][]byte) bool {
		return slices.EqualFunc(a, b, func(x, y []byte) bool { return string(x) == string(y) })
	}) {
		t.Fatalf("batches = %q, want %q", got, want)
	}
}

// TestWritten: a visit is complete without a read once both halves were
// written, in either order and in different batches, and forgotten then.
func TestWritten(t *testing.T) {
	lru, err := simplelru.NewLRU[string, room.Period](10, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &rawWriter{halves: lru}
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if _, done := w.written(room.Period{Visit: "v", End: at.Add(time.Hour)}); done {
		t.Fatal("a lone LEAVE is complete")
	}
	p, done := w.written(room.Period{Visit: "v", Start: at})
	if !done || !p.Start.Equal(at) || !p.End.Equal(at.Add(time.Hour)) {
		t.Fatalf("after both halves: %+v, complete %v", p, done)
	}
	if lru.Len() != 0 {
		t.Fatalf("a complete visit is still remembered (%d)", lru.Len())
	}
}

func TestParse(t *testing.T) {
	o, err := parse([]string{"--brokers", "127.0.0.1:9092", "--hosts", "127.0.0.1", "--topic", "t", "--keyspace", "k"}, io.Discard)
	if err != nil || o.batchRecords != 2000 || o.presenceBatch != 16 || o.concurrency != 64 || len(o.brokers) != 1 {
		t.Fatalf("parse = %+v, %v", o, err)
	}
	for _, bad := range [][]string{
		{"--brokers", "b", "--hosts", "h", "--topic", "t"},
		{"--brokers", "b", "--hosts", "h", "--topic", "t", "--keyspace", "k", "--presence-batch", "0"},
		{"--brokers", "b", "--hosts", "h", "--topic", "t", "--keyspace", "k", "extra"},
	} {
		if _, err := parse(bad, io.Discard); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}
