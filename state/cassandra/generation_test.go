package cassandra_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
)

// ownedBy returns ctx carrying the fence of generation gen of topology
// "topo", as the Trident runtime opens and writes state.
func ownedBy(ctx context.Context, gen state.Generation) context.Context {
	return state.WithFence(ctx, state.Fence{Owner: "topo", Generation: gen})
}

// wantFenced fails unless err is a fatal *state.FencedError naming current.
func wantFenced(t *testing.T, what string, err error, current state.Generation) {
	t.Helper()
	var fe *state.FencedError
	if !errors.As(err, &fe) || !errors.Is(err, state.ErrFenced) || failure.IsRetryable(err) || fe.Current != current {
		t.Fatalf("%s = %v, want a fatal *state.FencedError with current generation %v", what, err, current)
	}
}

func envelopeTable(t *testing.T, s *cassandra.Session) *cassandra.Table {
	t.Helper()
	table, err := s.EnsureTable(t.Context(), cassandra.TableSpec{Name: cassandratest.Table(t),
		Keys: []cassandra.Column{{Name: "word", Type: "text"}}})
	if err != nil {
		t.Fatal(err)
	}
	return table
}

func openFenced(t *testing.T, ctx context.Context, table *cassandra.Table) *cassandra.Map {
	t.Helper()
	m, err := table.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFencingGenerations: the epochs of backing maps follow the owner's
// generations. Once generation 2 has opened a map, generation 1 can never
// open one again (a restart of the superseded process's worker is
// refused, where a restart count would have given it a newer epoch than
// the rightful owner's), and a write of a map of generation 1 that arrives
// after generation 2 wrote the same key does not win.
func TestFencingGenerations(t *testing.T) {
	ctx := t.Context()
	table := envelopeTable(t, cassandratest.Session(t))
	k := []state.Key{state.MustKey("the")}
	put := func(m *cassandra.Map, ctx context.Context, v string) error {
		return m.MultiPut(ctx, k, [][]byte{[]byte(v)})
	}
	wantValue := func(m *cassandra.Map, want string) {
		t.Helper()
		es, err := m.MultiGet(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if !es[0].Found || string(es[0].Val) != want {
			t.Fatalf("value = %+v, want %q", es[0], want)
		}
	}

	old := openFenced(t, ownedBy(ctx, 1), table)
	oldOther := openFenced(t, ownedBy(ctx, 1), table) // another partition of generation 1
	if err := put(old, ownedBy(ctx, 1), "gen1"); err != nil {
		t.Fatal(err)
	}
	cur := openFenced(t, ownedBy(ctx, 2), table)
	if cur.Epoch() <= max(old.Epoch(), oldOther.Epoch()) {
		t.Fatalf("generation 2 has epoch %d, generation 1 had %d and %d", cur.Epoch(), old.Epoch(), oldOther.Epoch())
	}
	if f, ok := cur.Fence(); !ok || f.Generation != 2 {
		t.Fatalf("Fence() = %v, %v", f, ok)
	}

	// The superseded process restarts a worker: refused, for good.
	_, err := table.Open(ownedBy(ctx, 1))
	wantFenced(t, "Open by generation 1 after generation 2", err, 2)
	_, err = table.Backing(ownedBy(ctx, 1), 0, 1)
	wantFenced(t, "Backing by generation 1 after generation 2", err, 2)

	// Its map still open writes late: the newer generation's value stays.
	if err := put(cur, ownedBy(ctx, 2), "gen2"); err != nil {
		t.Fatal(err)
	}
	if err := put(old, ownedBy(ctx, 1), "late"); err != nil {
		t.Fatal(err) // accepted by Cassandra, under generation 2's write
	}
	wantValue(cur, "gen2")
	// A write that says it is of generation 1 is refused by a map of 2.
	wantFenced(t, "MultiPut of generation 1 to a map of generation 2", put(cur, ownedBy(ctx, 1), "x"), 2)
	wantValue(cur, "gen2")

	// The owner restarts its own workers; generation 3 takes over.
	again := openFenced(t, ownedBy(ctx, 2), table)
	if again.Epoch() <= cur.Epoch() {
		t.Fatalf("a restart of generation 2 has epoch %d, not above %d", again.Epoch(), cur.Epoch())
	}
	next := openFenced(t, ownedBy(ctx, 3), table)
	_, err = table.Open(ownedBy(ctx, 2))
	wantFenced(t, "Open by generation 2 after generation 3", err, 3)
	if err := put(again, ownedBy(ctx, 2), "gen2 late"); err != nil {
		t.Fatal(err)
	}
	if err := put(next, ownedBy(ctx, 3), "gen3"); err != nil {
		t.Fatal(err)
	}
	wantValue(next, "gen3")

	// Without a fence (a tool) a map is unfenced: it opens and outranks.
	tool := openFenced(t, ctx, table)
	if tool.Epoch() <= next.Epoch() {
		t.Fatalf("an unfenced map has epoch %d, not above %d", tool.Epoch(), next.Epoch())
	}
	_, err = table.Open(ownedBy(ctx, 2))
	wantFenced(t, "Open by generation 2 after an unfenced open", err, 3)
}

// TestFenceTableUpgrade: a fencing table of an earlier version (without
// gen) makes OpenTable fail clearly; EnsureTable adds the column, and the
// epochs go on from the stored ones.
func TestFenceTableUpgrade(t *testing.T) {
	ctx := t.Context()
	cfg := cassandratest.Config(t)
	cfg.Keyspace = testenv.UniqueName(t, "squall")
	s, err := cassandra.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureKeyspace(ctx, cassandra.SimpleReplication(1)); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.DropKeyspace(context.WithoutCancel(ctx)); err != nil {
			t.Error(err)
		}
	}()
	ks := cfg.Keyspace
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateTable(ctx, "squall_fences", `CREATE TABLE `+ks+`.squall_fences (name text PRIMARY KEY, epoch bigint)`))
	must(s.CreateTable(ctx, "words", `CREATE TABLE `+ks+`.words (word text PRIMARY KEY, value blob)`))
	must(s.Query(ctx, `INSERT INTO `+ks+`.squall_fences (name, epoch) VALUES (?, 5)`, ks+".words"))
	spec := cassandra.TableSpec{Name: "words", Keys: []cassandra.Column{{Name: "word", Type: "text"}}}

	_, err = s.OpenTable(ctx, spec)
	if !errors.Is(err, cassandra.ErrSchema) || !strings.Contains(err.Error(), "no column gen") {
		t.Fatalf("OpenTable with an old fencing table = %v, want ErrSchema naming the gen column", err)
	}
	table, err := s.EnsureTable(ctx, spec)
	must(err)
	m := openFenced(t, ownedBy(ctx, 1), table)
	if m.Epoch() != 6 {
		t.Fatalf("the first epoch after the upgrade is %d, want 6", m.Epoch())
	}
	openFenced(t, ownedBy(ctx, 2), table)
	_, err = table.Open(ownedBy(ctx, 1))
	wantFenced(t, "Open by generation 1 after the upgrade", err, 2)
	if _, err := s.OpenTable(ctx, spec); err != nil {
		t.Fatalf("OpenTable after the upgrade: %v", err)
	}
}
