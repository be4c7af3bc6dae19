package coordstoretest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// calls exercises every method once, for the tests that expect them all to
// fail the same way.
func calls(s coordstore.Store, c context.Context, stream string, k coordstore.Key, txid txn.TxID) map[string]error {
	const gen = 1
	out := map[string]error{}
	_, out["Acquire"] = s.Acquire(c, stream)
	_, out["Generation"] = s.Generation(c, stream)
	_, _, out["LoadCoordinator"] = s.LoadCoordinator(c, stream)
	_, out["SwapCoordinator"] = s.SwapCoordinator(c, coordstore.Fence{Owner: stream, Generation: gen}, 0, coordstore.Record{Committed: 1})
	_, _, out["GetMeta"] = s.GetMeta(c, k, txid)
	_, _, out["PrevMeta"] = s.PrevMeta(c, k, txid)
	out["PutMeta"] = s.PutMeta(c, gen, k, txid, []byte("v"))
	out["RemoveMeta"] = s.RemoveMeta(c, gen, k, txid)
	out["CleanupMetaBefore"] = s.CleanupMetaBefore(c, gen, k, txid)
	return out
}

func testInvalid(t *testing.T, s coordstore.Store) {
	long := strings.Repeat("x", 1025)
	for _, c := range []struct {
		name   string
		stream string
		key    coordstore.Key
	}{
		{"empty stream", "", coordstore.Key{Owner: "o", Partition: "p"}},
		{"empty owner", "s", coordstore.Key{Stream: "s", Partition: "p"}},
		{"empty partition", "s", coordstore.Key{Owner: "o", Stream: "s"}},
		{"long stream", long, coordstore.Key{Owner: "o", Stream: long, Partition: "p"}},
		{"long partition", "s", coordstore.Key{Owner: "o", Stream: "s", Partition: long}},
	} {
		for m, err := range calls(s, ctx(t), c.stream, c.key, 1) {
			if c.stream == "s" && (strings.HasSuffix(m, "Coordinator") || m == "Acquire" || m == "Generation") {
				continue // the stream name is valid
			}
			if !errors.Is(err, coordstore.ErrInvalid) || failure.IsRetryable(err) {
				t.Errorf("%s: %s = %v, want a fatal ErrInvalid", c.name, m, err)
			}
		}
	}
	for _, txid := range []txn.TxID{0, coordstore.MaxTxID} {
		if err := s.PutMeta(ctx(t), g(t, s, "o"), key, txid, nil); !errors.Is(err, coordstore.ErrInvalid) {
			t.Errorf("PutMeta(txid %d) = %v, want ErrInvalid", txid, err)
		}
	}
	wantEntries(t, s, key)
	testInvalidGeneration(t, s)
}

// testInvalidGeneration: generation 0 names no owner, so every write made
// with it is invalid, whether or not the owner has a generation yet, and
// stores nothing.
func testInvalidGeneration(t *testing.T, s coordstore.Store) {
	for _, owner := range []string{"none", "o"} {
		if owner == "o" {
			g(t, s, owner)
		}
		k := coordstore.Key{Owner: owner, Stream: "s", Partition: "p"}
		_, swapErr := s.SwapCoordinator(ctx(t), coordstore.Fence{Owner: owner}, 0, rec(1))
		for m, err := range map[string]error{
			"SwapCoordinator":   swapErr,
			"PutMeta":           s.PutMeta(ctx(t), 0, k, 1, []byte("v")),
			"RemoveMeta":        s.RemoveMeta(ctx(t), 0, k, 1),
			"CleanupMetaBefore": s.CleanupMetaBefore(ctx(t), 0, k, 2),
		} {
			if !errors.Is(err, coordstore.ErrInvalid) || failure.IsRetryable(err) {
				t.Errorf("%s by generation 0 of %q = %v, want a fatal ErrInvalid", m, owner, err)
			}
		}
		wantRecord(t, s, owner, coordstore.Record{}, 0)
		wantEntries(t, s, k)
	}
}

func testCanceled(t *testing.T, s coordstore.Store) {
	c, cancel := context.WithCancel(ctx(t))
	cancel()
	for m, err := range calls(s, c, "s", key, 1) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context = %v, want context.Canceled", m, err)
		}
	}
	// Nothing was written.
	wantRecord(t, s, "s", coordstore.Record{}, 0)
	wantEntries(t, s, key)
}

func testClose(t *testing.T, s coordstore.Store) {
	swap(t, s, "s", 0, rec(1))
	put(t, s, key, 1, "v")
	must(t, s.Close())
	for m, err := range calls(s, ctx(t), "s", key, 1) {
		if !errors.Is(err, coordstore.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", m, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}
