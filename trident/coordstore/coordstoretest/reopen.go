package coordstoretest

import (
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// testReopen checks that a durable store keeps records, versions and
// metadata across Close and Open.
func testReopen(t *testing.T, o Opener) {
	s := open(t, o)
	v := swap(t, s, "s", 0, rec(0, 0, 1))
	v = swap(t, s, "s", v, rec(2, 3))
	put(t, s, key, 1, "one")
	put(t, s, key, 3, "three")
	must(t, s.PutMeta(ctx(t), g(t, s, "o"), key, 4, nil))
	other := coordstore.Key{Owner: "o", Stream: "t", Partition: "p"}
	put(t, s, other, 9, "nine")
	must(t, s.Close())

	s = open(t, o)
	wantRecord(t, s, "s", rec(2, 3), v)
	wantRecord(t, s, "t", coordstore.Record{}, 0)
	wantMeta(t, s, key, 3, str("three"))
	wantMeta(t, s, key, 4, str(""))
	wantEntries(t, s, key, 1, 3, 4)
	wantEntries(t, s, other, 9)

	// Versions go on from where they were: the old one still conflicts,
	// the current one swaps to a greater one.
	wantConflict(t, s, "s", 0, rec(5))
	wantConflict(t, s, "s", v-1, rec(5))
	v2 := swap(t, s, "s", v, rec(3))
	must(t, s.Close())

	s = open(t, o)
	defer s.Close()
	wantRecord(t, s, "s", rec(3), v2)
}

// testReopenCleanup checks that removals and cleanups are durable too.
func testReopenCleanup(t *testing.T, o Opener) {
	s := open(t, o)
	for tx := txn.TxID(1); tx <= 6; tx++ {
		put(t, s, key, tx, "v")
	}
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), key, 3))
	must(t, s.RemoveMeta(ctx(t), g(t, s, "o"), key, 5))
	must(t, s.Close())

	s = open(t, o)
	defer s.Close()
	wantEntries(t, s, key, 3, 4, 6)
}
