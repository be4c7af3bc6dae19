package bolt_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/txn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func open(t testing.TB, path string, opts bolt.Options) *bolt.Map {
	t.Helper()
	m, err := bolt.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestConformance(t *testing.T) {
	statetest.TestBackingMap(t, func(t *testing.T) state.BackingMap[[]byte] {
		return open(t, filepath.Join(t.TempDir(), "state.db"), bolt.Options{NoSync: true})
	})
}

func TestConformanceWithLRU(t *testing.T) {
	statetest.TestBackingMap(t, func(t *testing.T) state.BackingMap[[]byte] {
		l, err := state.NewLRU[[]byte](open(t, filepath.Join(t.TempDir(), "state.db"), bolt.Options{NoSync: true}), 4)
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
}

// Committed opaque state survives closing and reopening the file, and a
// replay after the restart still finds prev.
func TestReopenPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "counts.db")
	keys := []state.Key{state.MustKey("room-1", 9), state.MustKey("room-2", 9)}
	ups := func(a, b int64) []state.ValueUpdater[int64] {
		return []state.ValueUpdater[int64]{statetest.Add(a), statetest.Add(b)}
	}

	bm, err := bolt.Open(path, bolt.Options{Bucket: "counts"})
	if err != nil {
		t.Fatal(err)
	}
	m := opaque.New(bm, state.MapOptions[int64]{})
	for tx, d := range []int64{1, 10} {
		m.BeginCommit(ctx, txn.TxID(tx+1))
		if _, err := m.MultiUpdate(ctx, keys, ups(d, 2*d)); err != nil {
			t.Fatal(err)
		}
		m.Commit(ctx, txn.TxID(tx+1))
	}
	if err := bm.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := bm.MultiGet(ctx, keys); !errors.Is(err, state.ErrClosed) {
		t.Errorf("MultiGet after Close: %v, want ErrClosed", err)
	}
	if err := bm.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	bm2 := open(t, path, bolt.Options{Bucket: "counts"})
	m2 := opaque.New(bm2, state.MapOptions[int64]{})
	es, err := m2.MultiGet(ctx, keys)
	if err != nil || es[0].Val != 11 || es[1].Val != 22 {
		t.Fatalf("after reopening: %+v, %v; want 11 and 22", es, err)
	}
	// The worker restarts and replays txid 2 with other content.
	m2.BeginCommit(ctx, 2)
	vs, err := m2.MultiUpdate(ctx, keys, ups(100, 200))
	if err != nil || vs[0] != 101 || vs[1] != 202 {
		t.Fatalf("replay of txid 2 after reopening: %v, %v; want [101 202]", vs, err)
	}
	m2.Commit(ctx, 2)

	// Another bucket of the same file is another map.
	other, err := bolt.New(bm2.DB(), "other")
	if err != nil {
		t.Fatal(err)
	}
	if es, _ := other.MultiGet(ctx, keys); es[0].Found {
		t.Error("a key leaked into another bucket")
	}
	other.Close() // does not close the shared file
	if _, err := bm2.MultiGet(ctx, keys); err != nil {
		t.Errorf("closing a map made with New closed the file: %v", err)
	}
}

// A put that its context abandons halfway is rolled back: all or nothing.
func TestPutIsAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "atomic.db")
	m := open(t, path, bolt.Options{NoSync: true})
	const n = 2000
	keys := make([]state.Key, n)
	vals := make([][]byte, n)
	for i := range keys {
		keys[i] = state.MustKey(i)
		vals[i] = []byte("v")
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	// A context that is live when the put starts and cancelled at its
	// next check, inside the transaction.
	err := m.MultiPut(&countdownCtx{Context: ctx, after: 2, calls: &calls}, keys, vals)
	cancel()
	if !errors.Is(err, context.Canceled) || !failure.IsRetryable(err) {
		t.Fatalf("MultiPut cancelled halfway: %v, want retryable context.Canceled", err)
	}
	if calls < 2 {
		t.Fatalf("context checked %d times; the test needs the put to be under way", calls)
	}
	es, err := m.MultiGet(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range es {
		if e.Found {
			t.Fatalf("key %d was written by a rolled-back put", i)
		}
	}
}

// countdownCtx reports Canceled from the after-th call of Err on.
type countdownCtx struct {
	context.Context
	after int
	calls *int
}

func (c *countdownCtx) Err() error {
	*c.calls++
	if *c.calls >= c.after {
		return context.Canceled
	}
	return nil
}

func TestErrorsAreClassified(t *testing.T) {
	ctx := context.Background()
	m := open(t, filepath.Join(t.TempDir(), "e.db"), bolt.Options{NoSync: true})
	huge := state.MustKey(strings.Repeat("k", bbolt.MaxKeySize+1))
	err := m.MultiPut(ctx, []state.Key{huge}, [][]byte{[]byte("v")})
	if err == nil || failure.IsRetryable(err) || !strings.Contains(err.Error(), m.Name()) {
		t.Errorf("a key too large: %v, want a fatal error naming the map", err)
	}
	dl, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if _, err := m.MultiGet(dl, []state.Key{state.MustKey("a")}); !errors.Is(err, context.DeadlineExceeded) || !failure.IsRetryable(err) {
		t.Errorf("an expired deadline: %v, want retryable", err)
	}
	if err := (bolt.Options{Bucket: strings.Repeat("b", 256)}).Validate(); err == nil {
		t.Error("Validate accepted a 256-byte bucket name")
	}
	if _, err := bolt.Open(filepath.Join(t.TempDir(), "x.db"), bolt.Options{Mode: 0o1777}); err == nil {
		t.Error("Open accepted an invalid mode")
	}
}

// A second process (here: a second Open) cannot take the file while it is
// open; it gives up after the lock timeout.
func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	open(t, path, bolt.Options{NoSync: true})
	start := time.Now()
	_, err := bolt.Open(path, bolt.Options{LockTimeout: 50 * time.Millisecond})
	if err == nil {
		t.Fatal("a second Open of a locked file succeeded")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}
}
