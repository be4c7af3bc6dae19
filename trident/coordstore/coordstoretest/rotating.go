package coordstoretest

import (
	"errors"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// testRotating follows Storm's test-rotating-transactional-state (its
// non-strict part) through Rotating.StateOrInit: a txid after every entry
// is initialized, a txid below a later entry gets an empty entry, and
// entries are kept until cleaned up.
func testRotating(t *testing.T, s coordstore.Store) {
	r := coordstore.Rotating{Store: s, Key: key, Gen: g(t, s, "o")}
	init := "10"
	var prevs []string
	initializer := func(prev []byte) ([]byte, error) {
		prevs = append(prevs, string(prev))
		return []byte(init), nil
	}
	get := func(txid txn.TxID, want string) {
		t.Helper()
		got, err := r.StateOrInit(ctx(t), txid, initializer)
		if err != nil || string(got) != want {
			t.Fatalf("StateOrInit(%d) = %q, %v; want %q", txid, got, err, want)
		}
	}
	get(1, "10")
	get(2, "10")
	init = "20"
	get(3, "20")
	get(1, "10") // exists: not initialized again
	get(10, "20")
	get(20, "20")
	get(12, "") // below 20: an empty entry
	get(19, "")
	get(12, "")
	get(21, "20")
	if want := []string{"", "10", "10", "20", "20", "20"}; len(prevs) != len(want) {
		t.Fatalf("initializer called with %q, want %q", prevs, want)
	} else {
		for i := range want {
			if prevs[i] != want[i] {
				t.Fatalf("initializer called with %q, want %q", prevs, want)
			}
		}
	}
	wantEntries(t, s, key, 1, 2, 3, 10, 12, 19, 20, 21)

	must(t, r.CleanupBefore(ctx(t), 12))
	wantEntries(t, s, key, 12, 19, 20, 21)
	e, ok, err := r.Previous(ctx(t), 20)
	if err != nil || !ok || e.TxID != 19 || len(e.Value) != 0 {
		t.Fatalf("Previous(20) = %d %q %v %v", e.TxID, e.Value, ok, err)
	}
	must(t, r.Override(ctx(t), 19, []byte("x")))
	if v, ok, err := r.State(ctx(t), 19); err != nil || !ok || string(v) != "x" {
		t.Fatalf("State(19) = %q %v %v", v, ok, err)
	}
	must(t, r.Remove(ctx(t), 19))
	wantEntries(t, s, key, 12, 20, 21)

	// An initializer's error is returned and nothing is stored.
	boom := errors.New("boom")
	if _, err := r.StateOrInit(ctx(t), 30, func([]byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("StateOrInit with a failing initializer = %v", err)
	}
	wantEntries(t, s, key, 12, 20, 21)
}
