package cassandrawindows_test

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/cassandrawindows"
	"github.com/squallstream/squall/trident/windowstore/windowstoretest"
)

func TestMain(m *testing.M) { cassandratest.Main(m) }

// TestConformance runs the windowstore suite against the real Cassandra
// of scripts/services.sh; it fails under CI=true if Cassandra is not
// configured, and skips otherwise.
func TestConformance(t *testing.T) {
	// Importing testenv here also marks this package as an integration
	// package for the Makefile (run alone, never while a service is down).
	testenv.CassandraHosts(t)
	s := cassandratest.Session(t)
	st, err := cassandrawindows.Open(t.Context(), s, cassandrawindows.Options{Table: cassandratest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	windowstoretest.Run(t, func(*testing.T) windowstore.Store { return st })
}

// TestFencedPuts: once a newer generation wrote a window task's records,
// an older one's writes fail with state.ErrFenced and change nothing; the
// owner's own writes, and unfenced ones, go through.
func TestFencedPuts(t *testing.T) {
	testenv.CassandraHosts(t)
	s := cassandratest.Session(t)
	st, err := cassandrawindows.Open(t.Context(), s, cassandrawindows.Options{Table: cassandratest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	gen := func(g state.Generation) context.Context {
		return state.WithFence(t.Context(), state.Fence{Owner: "t", Generation: g})
	}
	if err := st.Put(gen(1), "w/0", 1, []byte("one"), 0); err != nil {
		t.Fatalf("first put of generation 1: %v", err)
	}
	if err := st.Put(gen(1), "w/0", 2, []byte("two"), 1); err != nil {
		t.Fatalf("second put of generation 1: %v", err)
	}
	if err := st.Put(gen(2), "w/0", 2, []byte("two, again"), 2); err != nil {
		t.Fatalf("put of generation 2: %v", err)
	}
	if err := st.Put(gen(1), "w/0", 3, []byte("stale"), 2); !errors.Is(err, state.ErrFenced) {
		t.Fatalf("put of superseded generation 1 = %v, want state.ErrFenced", err)
	}
	if _, err := st.Get(t.Context(), "w/0", 3); !errors.Is(err, windowstore.ErrNotFound) {
		t.Fatalf("the fenced record was written: %v", err)
	}
	if rec, err := st.Get(t.Context(), "w/0", 2); err != nil || string(rec) != "two, again" {
		t.Fatalf("record of txid 2 = %q, %v", rec, err)
	}
	if _, err := st.Get(t.Context(), "w/0", 1); !errors.Is(err, windowstore.ErrNotFound) {
		t.Fatalf("txid 1 was not pruned: %v", err)
	}
	if err := st.Put(t.Context(), "w/0", 3, []byte("tool"), 2); err != nil {
		t.Fatalf("unfenced put: %v", err)
	}
	if err := st.Put(gen(1), "w/1", 1, []byte("another task"), 0); err != nil {
		t.Fatalf("generation 1 on another task's partition: %v", err)
	}
}
