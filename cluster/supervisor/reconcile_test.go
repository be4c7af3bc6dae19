package supervisor

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// TestStopWorkersOnExitFollowsChanges: under StopWorkersOnExit (the dev
// command) a slot's run is not taken for a stopping one, so a change of
// the assignments elsewhere leaves it alone and a new artifact for its
// slot replaces its worker.
func TestStopWorkersOnExitFollowsChanges(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	s, _ := e.run("s1", dir, func(c *Config) { c.StopWorkersOnExit = true })
	e.assign("t1", e.artifact("t1", sleeper), meta.Slot{Supervisor: "s1", Port: 7000})
	var pid int
	eventually(t, "t1's worker", func() bool { pid = pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pid)
	e.assign("t2", e.artifact("t2", sleeper+"# t2\n"), meta.Slot{Supervisor: "s1", Port: 7001})
	eventually(t, "t2's worker", func() bool { p := pidOf(t, dir, 7001); return p > 0 && alive(p) })
	killAtEnd(t, pidOf(t, dir, 7001))
	e.assign("t1", e.artifact("t1", sleeper+"# v2\n"), meta.Slot{Supervisor: "s1", Port: 7000})
	var pid2 int
	eventually(t, "t1's worker replaced", func() bool {
		pid2 = pidOf(t, dir, 7000)
		return !alive(pid) && pid2 > 0 && pid2 != pid && alive(pid2)
	})
	killAtEnd(t, pid2)
	if n := s.Starts(); n != 3 {
		t.Fatalf("%d starts, want 3", n)
	}
}

// TestFetchGuards: with certificates a supervisor fetches code only from
// holders that serve HTTPS with a nimbus's certificate of the cluster,
// and stores only content of the assigned digest.
func TestFetchGuards(t *testing.T) {
	e := newEnv(t)
	now := time.Now()
	ca, nimbus, client, stranger := testPKI(t, now)
	sup, err := ca.Issue(pki.Request{Role: pki.Supervisor, Name: "s1", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Client: e.cli, Prefix: "/t", ID: "s1", Ports: []int{7000}, DataDir: t.TempDir(), Bundle: sup})
	if err != nil {
		t.Fatal(err)
	}
	good := "#!/bin/sh\nexit 0\n"
	dg, err := codestore.ParseDigest(e.artifact("t1", good))
	if err != nil {
		t.Fatal(err)
	}
	serve := func(b *pki.Bundle, body string) string {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
		srv.TLS = b.ServerTLS(false)
		srv.StartTLS()
		t.Cleanup(srv.Close)
		return srv.URL
	}
	holders := func(urls ...string) {
		ctx := context.Background()
		if _, err := e.cli.Delete(ctx, e.keys.Holders("t1", dg.String()), clientv3.WithPrefix()); err != nil {
			t.Fatal(err)
		}
		for i, u := range urls {
			e.put(e.keys.Holders("t1", dg.String())+string(rune('a'+i)), u)
		}
	}
	ctx := context.Background()
	for _, c := range []struct {
		name, url, want string
	}{
		{"plain HTTP", e.srv.URL, "not HTTPS"},
		{"not a nimbus", serve(client, good), "is not a nimbus"},
		{"another cluster's nimbus", serve(stranger, good), "unknown authority"},
		{"wrong content", serve(nimbus, good+"# tampered\n"), "corrupt"},
	} {
		holders(c.url)
		refused := s.Refused()
		if err := s.fetch(ctx, "t1", dg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
		if err := s.artifacts.Verify(dg); !errors.Is(err, codestore.ErrMissing) {
			t.Errorf("%s: the artifact was stored: %v", c.name, err)
		}
		if c.want == "not HTTPS" && s.Refused() != refused+1 {
			t.Errorf("%s: not counted as refused", c.name)
		}
		os.Remove(s.artifacts.Path(dg)) // each case on its own
	}
	holders(e.srv.URL, serve(nimbus, good))
	if err := s.fetch(ctx, "t1", dg); err != nil {
		t.Fatalf("from a nimbus: %v", err)
	}
	if err := s.artifacts.Verify(dg); err != nil {
		t.Fatal(err)
	}
}
