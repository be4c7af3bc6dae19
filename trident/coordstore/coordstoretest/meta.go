package coordstoretest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

var key = coordstore.Key{Owner: "o", Stream: "s", Partition: "topic@0"}

func put(t *testing.T, s coordstore.Store, k coordstore.Key, txid txn.TxID, v string) {
	t.Helper()
	if err := s.PutMeta(ctx(t), g(t, s, k.Owner), k, txid, []byte(v)); err != nil {
		t.Fatalf("PutMeta(%s, %d): %v", k, txid, err)
	}
}

// wantMeta checks GetMeta; want nil means "no entry".
func wantMeta(t *testing.T, s coordstore.Store, k coordstore.Key, txid txn.TxID, want *string) {
	t.Helper()
	got, ok, err := s.GetMeta(ctx(t), k, txid)
	if err != nil {
		t.Fatalf("GetMeta(%s, %d): %v", k, txid, err)
	}
	switch {
	case want == nil && ok:
		t.Fatalf("GetMeta(%s, %d) = %q, want no entry", k, txid, got)
	case want != nil && !ok:
		t.Fatalf("GetMeta(%s, %d): no entry, want %q", k, txid, *want)
	case want != nil && string(got) != *want:
		t.Fatalf("GetMeta(%s, %d) = %q, want %q", k, txid, got, *want)
	}
}

// wantPrev checks PrevMeta; want 0 means "no entry".
func wantPrev(t *testing.T, s coordstore.Store, k coordstore.Key, txid, want txn.TxID, wantV string) {
	t.Helper()
	e, ok, err := s.PrevMeta(ctx(t), k, txid)
	if err != nil {
		t.Fatalf("PrevMeta(%s, %d): %v", k, txid, err)
	}
	switch {
	case want == 0 && ok:
		t.Fatalf("PrevMeta(%s, %d) = %d %q, want no entry", k, txid, e.TxID, e.Value)
	case want != 0 && (!ok || e.TxID != want || string(e.Value) != wantV):
		t.Fatalf("PrevMeta(%s, %d) = %d %q %v, want %d %q", k, txid, e.TxID, e.Value, ok, want, wantV)
	}
}

// wantEntries checks the complete list of entries through PrevMeta.
func wantEntries(t *testing.T, s coordstore.Store, k coordstore.Key, want ...txn.TxID) {
	t.Helper()
	var got []txn.TxID
	for at := coordstore.MaxTxID; ; {
		e, ok, err := s.PrevMeta(ctx(t), k, at)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append([]txn.TxID{e.TxID}, got...)
		at = e.TxID
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries of %s = %v, want %v", k, got, want)
	}
}

func str(s string) *string { return &s }

func testMetaGetPut(t *testing.T, s coordstore.Store) {
	wantMeta(t, s, key, 1, nil)
	put(t, s, key, 1, `{"first":0,"last":9}`)
	wantMeta(t, s, key, 1, str(`{"first":0,"last":9}`))
	wantMeta(t, s, key, 2, nil)
	put(t, s, key, 1, "override")
	wantMeta(t, s, key, 1, str("override"))
	big := bytes.Repeat([]byte("x"), 64<<10)
	must(t, s.PutMeta(ctx(t), g(t, s, "o"), key, 2, big))
	got, ok, err := s.GetMeta(ctx(t), key, 2)
	if err != nil || !ok || !bytes.Equal(got, big) {
		t.Fatalf("GetMeta of a 64KiB value: %d bytes %v %v", len(got), ok, err)
	}
	// Entries at the ends of the txid range.
	put(t, s, key, coordstore.MaxTxID-1, "high")
	wantMeta(t, s, key, coordstore.MaxTxID-1, str("high"))
	wantEntries(t, s, key, 1, 2, coordstore.MaxTxID-1)
}

func testMetaEmptyValues(t *testing.T, s coordstore.Store) {
	// An entry with an empty value exists, unlike a missing one.
	must(t, s.PutMeta(ctx(t), g(t, s, "o"), key, 1, nil))
	must(t, s.PutMeta(ctx(t), g(t, s, "o"), key, 2, []byte{}))
	wantMeta(t, s, key, 1, str(""))
	wantMeta(t, s, key, 2, str(""))
	wantPrev(t, s, key, 2, 1, "")
	wantEntries(t, s, key, 1, 2)
}

func testMetaPrev(t *testing.T, s coordstore.Store) {
	wantPrev(t, s, key, coordstore.MaxTxID, 0, "")
	for _, tx := range []txn.TxID{9, 2, 5} {
		put(t, s, key, tx, fmt.Sprint("v", tx))
	}
	for _, c := range []struct{ at, want txn.TxID }{
		{1, 0}, {2, 0}, {3, 2}, {5, 2}, {6, 5}, {9, 5}, {10, 9}, {1 << 40, 9}, {coordstore.MaxTxID, 9},
	} {
		v := ""
		if c.want != 0 {
			v = fmt.Sprint("v", c.want)
		}
		wantPrev(t, s, key, c.at, c.want, v)
	}
	// Last, in Rotating terms.
	r := coordstore.Rotating{Store: s, Key: key, Gen: g(t, s, "o")}
	e, ok, err := r.Last(ctx(t))
	if err != nil || !ok || e.TxID != 9 {
		t.Fatalf("Last = %d %v %v, want 9", e.TxID, ok, err)
	}
}

func testMetaRemove(t *testing.T, s coordstore.Store) {
	must(t, s.RemoveMeta(ctx(t), g(t, s, "o"), key, 4)) // absent: not an error
	for tx := txn.TxID(1); tx <= 5; tx++ {
		put(t, s, key, tx, "v")
	}
	must(t, s.RemoveMeta(ctx(t), g(t, s, "o"), key, 3))
	must(t, s.RemoveMeta(ctx(t), g(t, s, "o"), key, 3))
	wantMeta(t, s, key, 3, nil)
	wantPrev(t, s, key, 4, 2, "v")
	must(t, s.RemoveMeta(ctx(t), g(t, s, "o"), key, 5))
	wantEntries(t, s, key, 1, 2, 4)
	put(t, s, key, 3, "again")
	wantEntries(t, s, key, 1, 2, 3, 4)
}

func testMetaCleanup(t *testing.T, s coordstore.Store) {
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), key, 10)) // empty: not an error
	for _, tx := range []txn.TxID{1, 2, 4, 7, 8} {
		put(t, s, key, tx, "v")
	}
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), key, 1))
	wantEntries(t, s, key, 1, 2, 4, 7, 8)
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), key, 4)) // keeps 4 itself
	wantEntries(t, s, key, 4, 7, 8)
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), key, 6))
	wantEntries(t, s, key, 7, 8)
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), key, 6))
	wantEntries(t, s, key, 7, 8)
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), key, coordstore.MaxTxID))
	wantEntries(t, s, key)
	put(t, s, key, 3, "after cleanup")
	wantEntries(t, s, key, 3)
}

func testMetaKeys(t *testing.T, s coordstore.Store) {
	// Keys differing in any part, or splitting one string differently
	// between owner, stream and partition, are independent, and independent of
	// the coordinator record.
	keys := []coordstore.Key{
		{Owner: "o", Stream: "a", Partition: "b/c"},
		{Owner: "o", Stream: "a/b", Partition: "c"},
		{Owner: "o", Stream: "a", Partition: "b"},
		{Owner: "o", Stream: "b", Partition: "a"},
		{Owner: "o", Stream: "a", Partition: "bc"},
		{Owner: "o", Stream: "ab", Partition: "c"},
		{Owner: "o/a", Stream: "b", Partition: "c"},
		{Owner: "x", Stream: "a", Partition: "b"},
	}
	for i, k := range keys {
		put(t, s, k, txn.TxID(i+1), k.String())
	}
	v := swap(t, s, "a", 0, rec(1, 1))
	for i, k := range keys {
		wantEntries(t, s, k, txn.TxID(i+1))
		wantMeta(t, s, k, txn.TxID(i+1), str(k.String()))
	}
	must(t, s.CleanupMetaBefore(ctx(t), g(t, s, "o"), keys[0], coordstore.MaxTxID))
	wantEntries(t, s, keys[0])
	wantEntries(t, s, keys[2], 3)
	wantRecord(t, s, "a", rec(1, 1), v)
}

func testMetaCopies(t *testing.T, s coordstore.Store) {
	v := []byte("abc")
	must(t, s.PutMeta(ctx(t), g(t, s, "o"), key, 1, v))
	v[0] = 'X'
	got, _, err := s.GetMeta(ctx(t), key, 1)
	must(t, err)
	got[1] = 'Y'
	e, _, err := s.PrevMeta(ctx(t), key, 2)
	must(t, err)
	e.Value[2] = 'Z'
	wantMeta(t, s, key, 1, str("abc"))
}
