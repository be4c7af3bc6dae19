package codestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestDirPutVerify(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dg, err := d.Put(bytes.NewReader([]byte("binary v1")))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Verify(dg); err != nil {
		t.Fatalf("Verify fresh copy: %v", err)
	}
	if back, err := ParseDigest(dg.String()); err != nil || back != dg {
		t.Fatalf("ParseDigest(String) = %v, %v", back, err)
	}
	if err := d.PutVerified(dg, bytes.NewReader([]byte("binary v2"))); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("PutVerified with wrong content = %v, want ErrCorrupt", err)
	}
	if err := os.WriteFile(d.Path(dg), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Verify(dg); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify tampered = %v, want ErrCorrupt", err)
	}
	if err := d.Verify(dg); !errors.Is(err, ErrMissing) {
		t.Fatalf("Verify after removal = %v, want ErrMissing", err)
	}
	entries, _ := os.ReadDir(d.path)
	if len(entries) != 0 {
		t.Fatalf("leftover files: %v", entries)
	}
}

func TestFingerprint(t *testing.T) {
	p1 := Plan{Components: []Component{
		{Name: "spout", Fields: []string{"room", "user"}, Parallelism: 2},
		{Name: "count", Parallelism: 4, Inputs: []Grouping{{From: "spout", Kind: "fields", Fields: []string{"room"}}, {From: "clock", Kind: "all"}}},
	}}
	p2 := Plan{Components: []Component{p1.Components[1], p1.Components[0]}}
	p2.Components[0].Inputs = []Grouping{p1.Components[1].Inputs[1], p1.Components[1].Inputs[0]}
	bi := &debug.BuildInfo{Path: "example.com/app", Main: debug.Module{Path: "example.com/app", Version: "v1.0.0"}}
	if NewFingerprint(p1.Canonical(), bi) != NewFingerprint(p2.Canonical(), bi) {
		t.Fatal("component or input order changed the fingerprint")
	}
	p3 := p1
	p3.Components = slices.Clone(p1.Components)
	p3.Components[1].Parallelism = 5
	bi2 := *bi
	bi2.Main.Version = "v1.0.1"
	base := NewFingerprint(p1.Canonical(), bi)
	for name, f := range map[string]Fingerprint{
		"parallelism": NewFingerprint(p3.Canonical(), bi),
		"build":       NewFingerprint(p1.Canonical(), &bi2),
	} {
		if f == base {
			t.Errorf("a change of %s left the fingerprint as it was", name)
		}
	}
	if _, err := CurrentFingerprint(p1.Canonical()); err != nil {
		t.Fatal(err)
	}
}

// unguarded writes without fencing: the leader package's tests cover the
// fence; these tests cover replication.
type unguarded struct{ cli *clientv3.Client }

func (u unguarded) Write(ctx context.Context, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	return u.cli.Txn(ctx).Then(ops...).Commit()
}

type node struct {
	*Store
	dir  *Dir
	stop func()
}

func startNode(t *testing.T, cli *clientv3.Client, id string, clk clock.Clock, rf int, timeout time.Duration) node {
	t.Helper()
	dir, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var s *Store
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.Handler().ServeHTTP(w, r) }))
	s, err = New(Config{Client: cli, Prefix: "/test", ID: id, URL: srv.URL, Dir: dir, TTL: time.Second,
		ReplicationFactor: rf, ReplicationTimeout: timeout, Clock: clk, Logger: quiet.With("id", id)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			srv.Close()
		})
	}
	t.Cleanup(stop)
	return node{s, dir, stop}
}

// holderEvents waits for a DELETE of key followed by a PUT of it, after rev.
func holderEvents(t *testing.T, cli *clientv3.Client, key string, rev int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	deleted := false
	for resp := range cli.Watch(ctx, key, clientv3.WithRev(rev+1)) {
		for _, ev := range resp.Events {
			if ev.Type == clientv3.EventTypeDelete {
				deleted = true
			} else if deleted {
				return
			}
		}
	}
	t.Fatalf("no DELETE then PUT of %s (deleted=%v): %v", key, deleted, ctx.Err())
}

func TestUploadReplicatesAndRepairs(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	clk := clock.NewManual(time.Unix(0, 0))
	a := startNode(t, cli, "a", clk, 3, 20*time.Second)
	b := startNode(t, cli, "b", clk, 3, 20*time.Second)
	c := startNode(t, cli, "c", clk, 3, 20*time.Second)
	ctx := context.Background()

	code := bytes.Repeat([]byte("topology binary "), 10000)
	dg, err := a.Upload(ctx, unguarded{cli}, "t1", bytes.NewReader(code))
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	hs, _, err := a.Holders(ctx, "t1", dg)
	if err != nil || len(hs) < 3 {
		t.Fatalf("holders after Upload returned: %v, %v", hs, err)
	}
	recs, _, _ := a.Records(ctx)
	if len(recs) != 1 || recs[0].Status != Active || recs[0].Artifact != dg.String() {
		t.Fatalf("records = %+v", recs)
	}
	for _, n := range []node{a, b, c} {
		if got, err := os.ReadFile(n.dir.Path(dg)); err != nil || !bytes.Equal(got, code) {
			t.Fatalf("copy on %s: %v", n.cfg.ID, err)
		}
		if m, err := n.Missing(ctx); err != nil || len(m) != 0 {
			t.Fatalf("%s Missing = %v, %v", n.cfg.ID, m, err)
		}
	}

	// A corrupt copy on b: found at the next scan, unregistered, fetched.
	key := b.HoldersPrefix("t1", dg) + "b"
	resp, _ := cli.Get(ctx, key)
	if err := os.WriteFile(b.dir.Path(dg), []byte("bit rot"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, _ := b.Missing(ctx); !slices.Equal(m, []string{"t1"}) {
		t.Fatalf("b Missing with a corrupt copy = %v", m)
	}
	clk.Advance(DefaultScanInterval)
	holderEvents(t, cli, key, resp.Header.Revision)
	if err := b.dir.Verify(dg); err != nil {
		t.Fatalf("b's copy after repair: %v", err)
	}

	// A deleted copy on c, likewise.
	resp, _ = cli.Get(ctx, c.HoldersPrefix("t1", dg)+"c")
	os.Remove(c.dir.Path(dg))
	clk.Advance(DefaultScanInterval)
	holderEvents(t, cli, c.HoldersPrefix("t1", dg)+"c", resp.Header.Revision)

	// A newcomer misses t1 until it has synced; a stopped holder's key goes.
	d := startNode(t, cli, "d", clk, 3, time.Second)
	etcdtest.WaitFor(t, cli, a.HoldersPrefix("t1", dg), 20*time.Second, "d holds t1",
		func(kv map[string]string) bool { _, ok := kv[a.HoldersPrefix("t1", dg)+"d"]; return ok })
	if m, _ := d.Missing(ctx); len(m) != 0 {
		t.Fatalf("d Missing after sync = %v", m)
	}
	c.stop()
	if hs, _, _ := a.Holders(ctx, "t1", dg); hs["c"] != "" {
		t.Fatalf("stopped c still listed: %v", hs)
	}

	// An artifact no record names goes at a full scan once it is older
	// than PruneAfter; the recorded one stays, however old.
	orphan, err := a.dir.Put(bytes.NewReader([]byte("the code of a killed topology")))
	if err != nil {
		t.Fatal(err)
	}
	long := clk.Now().Add(-time.Hour)
	for _, p := range []string{a.dir.Path(orphan), a.dir.Path(dg)} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(DefaultScanInterval)
	timeout := time.After(20 * time.Second)
	for {
		scanned := a.Changed() // broadcast at the end of every sync, before the check
		if _, err := os.Stat(a.dir.Path(orphan)); errors.Is(err, os.ErrNotExist) {
			break
		}
		select {
		case <-scanned:
		case <-timeout:
			t.Fatal("the orphan artifact was not pruned at the full scan")
		}
	}
	if err := a.dir.Verify(dg); err != nil {
		t.Fatalf("the recorded artifact after pruning: %v", err)
	}
}

// TestDirPrune keeps what it is told to and what is recent.
func TestDirPrune(t *testing.T) {
	d, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(s string) Digest {
		dg, err := d.Put(bytes.NewReader([]byte(s)))
		if err != nil {
			t.Fatal(err)
		}
		return dg
	}
	kept, old, recent := put("kept"), put("old"), put("recent")
	long := time.Now().Add(-time.Hour)
	for _, dg := range []Digest{kept, old} {
		os.Chtimes(d.Path(dg), long, long)
	}
	removed, err := d.Prune(map[Digest]bool{kept: true}, time.Now().Add(-time.Minute))
	if err != nil || len(removed) != 1 || removed[0] != old {
		t.Fatalf("Prune = %v, %v; want only %s", removed, err, old)
	}
	for _, dg := range []Digest{kept, recent} {
		if err := d.Verify(dg); err != nil {
			t.Fatalf("%s after Prune: %v", dg, err)
		}
	}
}

func TestUploadFailsBelowReplicationFactor(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	a := startNode(t, cli, "a", nil, 2, 500*time.Millisecond)
	ctx := context.Background()
	_, err := a.Upload(ctx, unguarded{cli}, "t1", bytes.NewReader([]byte("code")))
	var re *ReplicationError
	if !errors.As(err, &re) || !errors.Is(err, ErrReplication) || re.Holders != 1 || re.Want != 2 {
		t.Fatalf("Upload with one nimbus of two = %v, want a ReplicationError 1 of 2", err)
	}
	if recs, _, _ := a.Records(ctx); len(recs) != 0 {
		t.Fatalf("failed upload left records %+v", recs)
	}
}

func TestHandler(t *testing.T) {
	d, _ := OpenDir(t.TempDir())
	dg, _ := d.Put(bytes.NewReader([]byte("x")))
	s := &Store{cfg: Config{Dir: d}}
	for path, want := range map[string]int{
		"/code/" + dg.String():             200,
		"/code/zz":                         400,
		"/code/" + fmt.Sprintf("%064x", 1): 404,
	} {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("GET %s = %d, want %d", path, rec.Code, want)
		}
	}
}
