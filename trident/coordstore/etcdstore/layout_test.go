package etcdstore_test

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
	"github.com/squallstream/squall/txn"
)

// TestNewInvalid: New and Dial refuse a missing client, a prefix ending
// with '/', a negative timeout and no endpoints, with fatal ErrInvalid
// errors.
func TestNewInvalid(t *testing.T) {
	cli, err := clientv3.New(clientConfig([]string{refusedAddr(t)}))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for name, err := range map[string]error{
		"nil client":       second(etcdstore.New(nil, "/p", etcdstore.Options{})),
		"trailing slash":   second(etcdstore.New(cli, "/p/", etcdstore.Options{})),
		"root":             second(etcdstore.New(cli, "/", etcdstore.Options{})),
		"negative timeout": second(etcdstore.New(cli, "/p", etcdstore.Options{RequestTimeout: -time.Second})),
		"Dial prefix":      second(etcdstore.Dial(clientConfig([]string{refusedAddr(t)}), "/p/", etcdstore.Options{})),
		"Dial endpoints":   second(etcdstore.Dial(clientConfig(nil), "/p", etcdstore.Options{})),
	} {
		if !errors.Is(err, coordstore.ErrInvalid) || failure.IsRetryable(err) {
			t.Errorf("%s: %v, want a fatal ErrInvalid", name, err)
		}
	}
	s, err := etcdstore.New(cli, "", etcdstore.Options{})
	if err != nil || s.Prefix() != etcdstore.DefaultPrefix {
		t.Fatalf("New with an empty prefix = %v, %v; want prefix %q", s, err, etcdstore.DefaultPrefix)
	}
	s.Close()
}

func second[T any](_ T, err error) error { return err }

// TestOwnership: closing a store from New leaves its client open;
// closing one from Dial closes the client it made (goleak, in TestMain,
// finds the goroutines of a client left open).
func TestOwnership(t *testing.T) {
	endpoints := embedded(t)
	cli := client(t, endpoints)
	s, err := etcdstore.New(cli, newPrefix(t, nil), etcdstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(t.Context(), "o"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Get(t.Context(), "x"); err != nil {
		t.Fatalf("the client of a closed store: %v, want it still open", err)
	}
	d, err := etcdstore.Dial(clientConfig(endpoints), newPrefix(t, nil), etcdstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Acquire(t.Context(), "o"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

// keys returns every key and value under prefix.
func keys(t *testing.T, cli *clientv3.Client, prefix string) map[string]string {
	t.Helper()
	resp, err := cli.Get(t.Context(), prefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = string(kv.Value)
	}
	return out
}

// TestLayout checks the documented key layout: escaped names, txids as 16
// hexadecimal digits, decimal generations, and the record's version being
// its key's ModRevision.
func TestLayout(t *testing.T) {
	cli := client(t, embedded(t))
	p := newPrefix(t, nil)
	s, err := etcdstore.New(cli, p, etcdstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	owner := "team/a%b c"
	var gen coordstore.Generation
	for range 2 {
		if gen, err = s.Acquire(ctx, owner); err != nil {
			t.Fatal(err)
		}
	}
	v, err := s.SwapCoordinator(ctx, coordstore.Fence{Owner: owner, Generation: gen}, 0, coordstore.Record{Committed: 3})
	if err != nil {
		t.Fatal(err)
	}
	k := coordstore.Key{Owner: owner, Stream: "counts", Partition: "topic@3"}
	for _, tx := range []uint64{7, 0x1_0000_0000} {
		if err := s.PutMeta(ctx, gen, k, txn.TxID(tx), []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	dir := p + "/team%2fa%25b%20c/"
	want := map[string]string{
		dir + "gen":   "2",
		dir + "coord": "\x01\x03\x00",
		dir + "meta/counts/topic@3/0000000000000007": "m",
		dir + "meta/counts/topic@3/0000000100000000": "m",
	}
	if got := keys(t, cli, p); !maps.Equal(got, want) {
		t.Fatalf("keys under %s:\n got %q\nwant %q", p, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	resp, err := cli.Get(ctx, dir+"coord")
	if err != nil {
		t.Fatal(err)
	}
	if mr := resp.Kvs[0].ModRevision; coordstore.Version(mr) != v {
		t.Fatalf("version %d, ModRevision of the record %d", v, mr)
	}
}

// TestCorrupt: keys under the prefix that the store did not write in its
// format give fatal ErrCorrupt errors naming what was read, never a
// silent zero.
func TestCorrupt(t *testing.T) {
	cli := client(t, embedded(t))
	p := newPrefix(t, nil)
	s, err := etcdstore.New(cli, p, etcdstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	put := func(k, v string) {
		if _, err := cli.Put(ctx, p+k, v); err != nil {
			t.Fatal(err)
		}
	}
	put("/g/gen", "007")
	put("/c/coord", "\x02junk")
	put("/m/meta/s/p/00000000000000zz", "v")
	k := coordstore.Key{Owner: "m", Stream: "s", Partition: "p"}
	_, _, prevErr := s.PrevMeta(ctx, k, coordstore.MaxTxID)
	_, genErr := s.Generation(ctx, "g")
	_, acqErr := s.Acquire(ctx, "g")
	_, putErr := s.SwapCoordinator(ctx, coordstore.Fence{Owner: "g", Generation: 7}, 0, coordstore.Record{})
	_, _, loadErr := s.LoadCoordinator(ctx, "c")
	for name, err := range map[string]error{
		"Generation":      genErr,
		"Acquire":         acqErr,
		"SwapCoordinator": putErr,
		"LoadCoordinator": loadErr,
		"PrevMeta":        prevErr,
	} {
		if !errors.Is(err, coordstore.ErrCorrupt) || failure.IsRetryable(err) {
			t.Errorf("%s over a damaged key = %v, want a fatal ErrCorrupt", name, err)
		}
	}
}
