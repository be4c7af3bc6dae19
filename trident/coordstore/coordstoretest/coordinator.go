package coordstoretest

import (
	"errors"
	"maps"
	"math"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

func rec(committed txn.TxID, attempts ...uint32) coordstore.Record {
	r := coordstore.Record{Committed: committed}
	if len(attempts) > 0 {
		r.Attempts = map[txn.TxID]uint32{}
		for i, a := range attempts {
			r.Attempts[committed+1+txn.TxID(i)] = a
		}
	}
	return r
}

func equalRecord(a, b coordstore.Record) bool {
	return a.Committed == b.Committed && maps.Equal(a.Attempts, b.Attempts) && maps.Equal(a.Failures, b.Failures)
}

func load(t *testing.T, s coordstore.Store, stream string) (coordstore.Record, coordstore.Version) {
	t.Helper()
	r, v, err := s.LoadCoordinator(ctx(t), stream)
	if err != nil {
		t.Fatalf("LoadCoordinator(%q): %v", stream, err)
	}
	return r, v
}

func wantRecord(t *testing.T, s coordstore.Store, stream string, want coordstore.Record, wantV coordstore.Version) {
	t.Helper()
	got, v := load(t, s, stream)
	if !equalRecord(got, want) || v != wantV {
		t.Fatalf("LoadCoordinator(%q) = %+v v%d, want %+v v%d", stream, got, v, want, wantV)
	}
}

func swap(t *testing.T, s coordstore.Store, stream string, old coordstore.Version, r coordstore.Record) coordstore.Version {
	t.Helper()
	v, err := s.SwapCoordinator(ctx(t), fence(t, s, stream), old, r)
	if err != nil {
		t.Fatalf("SwapCoordinator(%q, v%d): %v", stream, old, err)
	}
	if v <= old {
		t.Fatalf("SwapCoordinator(%q, v%d) = v%d, want a greater version", stream, old, v)
	}
	return v
}

func wantConflict(t *testing.T, s coordstore.Store, stream string, old coordstore.Version, r coordstore.Record) {
	t.Helper()
	_, err := s.SwapCoordinator(ctx(t), fence(t, s, stream), old, r)
	if !errors.Is(err, coordstore.ErrConflict) {
		t.Fatalf("SwapCoordinator(%q, v%d) = %v, want ErrConflict", stream, old, err)
	}
	if failure.IsRetryable(err) {
		t.Fatalf("a conflict must be fatal, got a retryable %v", err)
	}
}

func testCoordinatorEmpty(t *testing.T, s coordstore.Store) {
	wantRecord(t, s, "s", coordstore.Record{}, 0)
}

func testCoordinatorSwap(t *testing.T, s coordstore.Store) {
	v1 := swap(t, s, "s", 0, rec(0, 0, 0))
	wantRecord(t, s, "s", rec(0, 0, 0), v1)

	// Creating again, or swapping from a stale version, conflicts and
	// changes nothing.
	wantConflict(t, s, "s", 0, rec(7))
	wantConflict(t, s, "s", v1+1, rec(7))
	wantRecord(t, s, "s", rec(0, 0, 0), v1)

	v2 := swap(t, s, "s", v1, rec(1, 2))
	wantConflict(t, s, "s", v1, rec(9))
	wantRecord(t, s, "s", rec(1, 2), v2)

	// A record without attempts round-trips as one.
	v3 := swap(t, s, "s", v2, rec(2))
	wantRecord(t, s, "s", rec(2), v3)
	if v3 <= v2 || v2 <= v1 {
		t.Fatalf("versions not increasing: %d %d %d", v1, v2, v3)
	}
}

func testCoordinatorStreams(t *testing.T, s coordstore.Store) {
	// Streams are independent, including names that extend one another or
	// contain separators.
	names := []string{"a", "ab", "a/b", "a\x00b", "ünïcode", string(make([]byte, 1024))}
	vs := map[string]coordstore.Version{}
	for i, n := range names {
		vs[n] = swap(t, s, n, 0, rec(txn.TxID(i), uint32(i)))
	}
	for i, n := range names {
		wantRecord(t, s, n, rec(txn.TxID(i), uint32(i)), vs[n])
	}
	wantRecord(t, s, "b", coordstore.Record{}, 0)
	// Each stream has its own versions: swapping one never conflicts with
	// another's.
	for i, n := range names {
		vs[n] = swap(t, s, n, vs[n], rec(txn.TxID(i+10)))
	}
}

func testCoordinatorCopies(t *testing.T, s coordstore.Store) {
	r := rec(3, 1, 2)
	v := swap(t, s, "s", 0, r)
	r.Attempts[4] = 99 // the store must not keep the caller's map
	got, _ := load(t, s, "s")
	got.Attempts[5] = 99 // nor hand out its own
	wantRecord(t, s, "s", rec(3, 1, 2), v)
}

func testCoordinatorExtremes(t *testing.T, s coordstore.Store) {
	r := coordstore.Record{
		Committed: coordstore.MaxTxID - 10,
		Attempts: map[txn.TxID]uint32{
			coordstore.MaxTxID - 9: math.MaxUint32,
			coordstore.MaxTxID - 1: 0,
		},
	}
	v := swap(t, s, "s", 0, r)
	wantRecord(t, s, "s", r, v)
	// Many attempts in flight.
	big := coordstore.Record{Committed: 1, Attempts: map[txn.TxID]uint32{}}
	for i := range 5000 {
		big.Attempts[txn.TxID(i+2)] = uint32(i)
	}
	v = swap(t, s, "s", v, big)
	wantRecord(t, s, "s", big, v)
}

func testCoordinatorFailures(t *testing.T, s coordstore.Store) {
	// Failure counts round-trip, and a later record without them loads
	// without them.
	r := rec(3, 1, 2, 0)
	r.Failures = map[txn.TxID]uint32{4: 2, 6: math.MaxUint32}
	v := swap(t, s, "s", 0, r)
	wantRecord(t, s, "s", r, v)
	got, _ := load(t, s, "s")
	got.Failures[4] = 99 // the store must not hand out its own map
	wantRecord(t, s, "s", r, v)
	v = swap(t, s, "s", v, rec(4, 0))
	wantRecord(t, s, "s", rec(4, 0), v)
	// Failures without attempts, too.
	only := coordstore.Record{Committed: 5, Failures: map[txn.TxID]uint32{6: 1}}
	v = swap(t, s, "s", v, only)
	wantRecord(t, s, "s", only, v)
}
