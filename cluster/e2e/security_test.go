package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// The attacks of docs/security.md's threat model, replayed against a
// cluster started as docs/security.md tells an operator to start one:
// each must be refused, while the legitimate commands keep working.

// secureCluster starts one nimbus and one supervisor with certificates
// and returns the leader's address.
func secureCluster(t *testing.T) (*cluster, string) {
	c := newCluster(t, 2*time.Second)
	c.nimbus("n1")
	c.supervisor("s1", t.TempDir(), 7300)
	return c, c.leader(60*time.Second, "")
}

// bundle loads one of the cluster's certificate directories.
func (c *cluster) bundle(name string) *pki.Bundle {
	c.t.Helper()
	b, err := pki.LoadBundle(filepath.Join(c.Certs, name))
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// client is an HTTPS client that trusts the cluster's CA and presents
// the certificate of dir (none when dir is empty) to servers of role
// server (a nimbus when none is given).
func (c *cluster) client(dir string, server ...pki.Role) *http.Client {
	admin := c.bundle("admin")
	cfg := &tls.Config{RootCAs: admin.Roots(), MinVersion: tls.VersionTLS13}
	if len(server) == 0 {
		server = []pki.Role{pki.Nimbus}
	}
	if dir != "" {
		cfg = c.bundle(dir).ClientTLS(server...)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

func do(t *testing.T, hc *http.Client, method, url string, header map[string]string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

func TestSecurityNimbusAPI(t *testing.T) {
	c, addr := secureCluster(t)
	base := "https://" + addr
	admin, anon := c.client("admin"), c.client("")

	// Plain HTTP gets nothing.
	if code, _ := do(t, http.DefaultClient, "GET", "http://"+addr+"/api/topologies", nil, nil); code == http.StatusOK {
		t.Fatal("the nimbus answered plain HTTP")
	}
	// Without a certificate: reads on loopback only, no submit.
	if code, body := do(t, anon, "POST", base+"/api/topologies/wordcount", map[string]string{"Content-Type": "text/plain"},
		strings.NewReader("#!/bin/sh\ntouch /tmp/pwned\n")); code != http.StatusForbidden && code != http.StatusUnauthorized {
		t.Fatalf("unauthenticated submit: %d %s", code, body)
	}
	if code, body := do(t, anon, "GET", base+"/api/topologies", nil, nil); code != http.StatusOK {
		t.Fatalf("a loopback read without a certificate: %d %s", code, body)
	}
	// A browser page posting cross-site with the admin's certificate
	// (the browser holds it): refused.
	if code, body := do(t, admin, "POST", base+"/api/topologies/wordcount/deactivate",
		map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", "Content-Type": "text/plain"}, nil); code != http.StatusForbidden {
		t.Fatalf("cross-site POST: %d %s", code, body)
	}
	// DNS rebinding: a name that is not the nimbus's.
	if code, body := do(t, admin, "GET", base+"/api/topologies", map[string]string{"Host": "evil.example"}, nil); code != http.StatusMisdirectedRequest {
		t.Fatalf("rebound Host: %d %s", code, body)
	}
	// A declared 100 GB upload is refused before anything is read.
	conn, err := tls.Dial("tcp", addr, c.bundle("admin").ClientTLS(pki.Nimbus))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /api/topologies/wordcount HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\nx", addr, int64(100)<<30)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if !strings.Contains(status, "413") {
		t.Fatalf("a declared 100 GB upload: %q %v, want 413 at once", status, err)
	}
	// Code only to nimbuses and supervisors.
	c.submit("wordcount")
	a := c.waitAssignment("wordcount")
	for name, hc := range map[string]*http.Client{"no certificate": anon, "the admin": admin} {
		if code, _ := do(t, hc, "GET", base+"/code/"+a.Artifact, nil, nil); code != http.StatusForbidden && code != http.StatusUnauthorized {
			t.Errorf("code served to %s: %d", name, code)
		}
	}
	if code, _ := do(t, c.client("supervisor"), "GET", base+"/code/"+a.Artifact, nil, nil); code != http.StatusOK {
		t.Errorf("code refused to a supervisor: %d", code)
	}
	// Another client may not kill the admin's topology... an admin may.
	c.issue(pki.Client, "mallory")
	if code, body := do(t, c.client("mallory"), "DELETE", base+"/api/topologies/wordcount", nil, nil); code != http.StatusForbidden {
		t.Fatalf("another client's kill: %d %s", code, body)
	}
	if out, err := c.Run("list"); err != nil || !strings.Contains(out, "wordcount") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err := c.Run("kill", "wordcount"); err != nil {
		t.Fatalf("kill by its owner: %v\n%s", err, out)
	}
}

// issue makes a certificate of role under c.Certs/name.
func (c *cluster) issue(role pki.Role, name string) {
	c.t.Helper()
	ca, err := pki.LoadAuthority(filepath.Join(c.Certs, "ca"))
	if err != nil {
		c.t.Fatal(err)
	}
	b, err := ca.Issue(pki.Request{Role: role, Name: name, Hosts: []string{"127.0.0.1"}, Now: time.Now()})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := pki.WriteBundle(filepath.Join(c.Certs, name), b); err != nil {
		c.t.Fatal(err)
	}
}

// waitAssignment waits for a topology's assignment.
func (c *cluster) waitAssignment(topology string) meta.Assignment {
	c.t.Helper()
	if err := eventually(60*time.Second, func() bool {
		resp, err := c.cli.Get(context.Background(), c.keys.Assignment(topology))
		return err == nil && len(resp.Kvs) > 0
	}); err != nil {
		c.t.Fatalf("no assignment of %s: %v", topology, err)
	}
	a, _ := c.assignment(topology)
	return a
}

// TestSecurityForgedAssignmentRunsNothing: someone who can write to etcd
// records a code holder (their own HTTP server) and an assignment of
// their code to the supervisor's slot. The supervisor fetches nothing
// and runs nothing; the leader deletes the forged assignment.
func TestSecurityForgedAssignmentRunsNothing(t *testing.T) {
	c, _ := secureCluster(t)
	var fetched atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		io.WriteString(w, "#!/bin/sh\ntouch /tmp/pwned\n")
	}))
	defer evil.Close()
	evilTLS := httptest.NewTLSServer(evil.Config.Handler)
	defer evilTLS.Close()
	digest := "0000000000000000000000000000000000000000000000000000000000000000"
	// The etcd reads below poll for up to 30 s: the context outlives them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := meta.Assignment{Topology: "evil", Artifact: digest, Status: meta.Active, Epoch: 1,
		Workers: []meta.Worker{{Slot: meta.Slot{Supervisor: "s1", Port: 7300}}}}
	// A signature by a certificate of another CA.
	other, err := pki.NewAuthority("other", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fake, err := other.Issue(pki.Request{Role: pki.Nimbus, Name: "n1", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	signed := a
	if err := signed.Sign(fake); err != nil {
		t.Fatal(err)
	}
	for i, holder := range []string{evil.URL, evilTLS.URL} {
		if _, err := c.cli.Put(ctx, c.keys.Holders("evil", digest)+fmt.Sprint("n", i), holder); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.cli.Put(ctx, c.keys.Assignment("evil"), meta.Encode(a)); err != nil {
		t.Fatal(err)
	}
	// The leader removes it (no such topology was submitted)...
	if err := eventually(30*time.Second, func() bool {
		resp, err := c.cli.Get(ctx, c.keys.Assignment("evil"))
		return err == nil && len(resp.Kvs) == 0
	}); err != nil {
		t.Fatalf("the forged assignment stayed: %v", err)
	}
	// ... and a signed one by a stranger's nimbus, written again, runs
	// nothing either.
	if _, err := c.cli.Put(ctx, c.keys.Assignment("evil"), meta.Encode(signed)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the supervisor's watch has seen it: nothing may follow
	if n := fetched.Load(); n != 0 {
		t.Fatalf("the supervisor fetched the forged code %d times", n)
	}
	if pids := c.WorkerPIDs(); len(pids) != 0 {
		t.Fatalf("workers run: %v", pids)
	}
	c.cli.Delete(ctx, c.keys.Prefix+"/code/evil/", clientv3.WithPrefix())
}

// TestSecurityKilledTopologyStaysDead: after a kill, an etcd writer puts
// the topology's assignment back, changed (a new epoch) so that the
// leader's signature no longer holds. The supervisor still has the
// artifact, but starts nothing.
func TestSecurityKilledTopologyStaysDead(t *testing.T) {
	c := newCluster(t, 2*time.Second)
	c.nimbus("n1")
	sup := c.supervisor("s1", t.TempDir(), 7600)
	c.leader(60*time.Second, "")
	c.submit("wordcount")
	c.committing("wordcount", 60*time.Second, 0, "first commits", anyStatus)
	a, _ := c.assignment("wordcount")
	if out, err := c.Run("kill", "wordcount"); err != nil {
		t.Fatalf("kill: %v\n%s", err, out)
	}
	if err := eventually(30*time.Second, func() bool { return len(c.WorkerPIDs()) == 0 }); err != nil {
		t.Fatalf("workers still run after the kill: %v", err)
	}
	starts := strings.Count(sup.Logs.String(), "supervisor: started a worker")
	a.Epoch++
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.cli.Put(ctx, c.keys.Assignment("wordcount"), meta.Encode(a)); err != nil {
		t.Fatal(err)
	}
	if err := eventually(10*time.Second, func() bool {
		return strings.Contains(sup.Logs.String(), "refusing an assignment no nimbus of the cluster signed")
	}); err != nil {
		t.Fatalf("the supervisor did not refuse the forged assignment: %v", err)
	}
	time.Sleep(time.Second)
	if n := strings.Count(sup.Logs.String(), "supervisor: started a worker"); n != starts {
		t.Fatalf("the supervisor started %d workers of the forged assignment", n-starts)
	}
}

// TestSecurityWorkerTransportRefusesStrangers: with the public data of
// the cluster view (a worker's transport address), a stranger connects:
// plain TCP and a TLS client without the topology's certificate are both
// refused.
func TestSecurityWorkerTransportRefusesStrangers(t *testing.T) {
	c := newCluster(t, 2*time.Second)
	c.nimbus("n1")
	c.supervisor("s1", t.TempDir(), 7400)
	c.supervisor("s2", t.TempDir(), 7500)
	c.leader(60*time.Second, "")
	if out, err := c.Run("submit", "wordcount", "--workers", "2", "--timeout", "60s"); err != nil {
		t.Fatalf("submit: %v\n%s", err, out)
	}
	c.committing("wordcount", 90*time.Second, 0, "commits across two workers over TLS", anyStatus)
	ws := c.workers("wordcount")
	if len(ws) == 0 {
		t.Fatal("no worker registered")
	}
	addr := ws[0].Addr
	// Plain TCP: whatever it sends, it gets no handshake answer.
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "SQUALL handshake wordcount\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(conn)
	conn.Close()
	if strings.Contains(string(b), "wordcount") {
		t.Fatalf("a plain connection got an answer: %q", b)
	}
	// TLS with a certificate of the cluster that is not a worker of this
	// topology and epoch (the admin's): refused.
	adm := c.bundle("admin")
	_, cfg := adm.PeerTLS(func(pki.Identity) error { return nil })
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err == nil {
		tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = tc.Read(make([]byte, 1))
		tc.Close()
	}
	if err == nil {
		t.Fatal("the worker accepted the admin's certificate on its transport")
	}
	// A certificate of this topology's epoch, issued by a supervisor:
	// the TLS handshake completes (the transport speaks TLS).
	a, _ := c.assignment("wordcount")
	peer, err := c.bundle("supervisor").IssueWorker(pki.WorkerName("wordcount", a.Epoch), nil, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, cfg = peer.PeerTLS(func(pki.Identity) error { return nil })
	tc, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatalf("a worker certificate of the topology's epoch: %v", err)
	}
	tc.Close()
	// The refusals are counted, on the worker's own monitor.
	mon := c.client("admin", pki.Worker)
	var body string
	if err := eventually(10*time.Second, func() bool {
		var code int
		code, body = do(t, mon, "GET", ws[0].MonitorURL+"/metrics", nil, nil)
		return code == http.StatusOK && strings.Contains(body, `squall_transport_refused_total{reason="tls",topology="wordcount"}`)
	}); err != nil {
		t.Fatalf("no refusal counted on the worker's monitor: %v\n%s", err, grepLines(body, "squall_transport"))
	}
}

// grepLines returns the lines of s containing sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestSecurityLogsNeedAnIdentity: the supervisor's log server answers
// cluster identities only.
func TestSecurityLogsNeedAnIdentity(t *testing.T) {
	c, _ := secureCluster(t)
	resp, err := c.cli.Get(context.Background(), c.keys.Supervisor("s1"))
	if err != nil || len(resp.Kvs) == 0 {
		if err := eventually(30*time.Second, func() bool {
			resp, err = c.cli.Get(context.Background(), c.keys.Supervisor("s1"))
			return err == nil && len(resp.Kvs) > 0
		}); err != nil {
			t.Fatal("the supervisor did not register")
		}
	}
	var si meta.SupervisorInfo
	if err := meta.Decode("", resp.Kvs[0].Value, &si); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(si.LogURL, "https://") {
		t.Fatalf("log URL %q is not HTTPS", si.LogURL)
	}
	url := si.LogURL + "/logs/7300?tail=5"
	if code, body := do(t, c.client("admin", pki.Supervisor), "GET", url, nil, nil); code != http.StatusOK {
		t.Fatalf("the admin's log request: %d %s", code, body)
	}
	if code, body := do(t, c.client("", pki.Supervisor), "GET", url, nil, nil); code != http.StatusUnauthorized {
		t.Fatalf("a log request without a certificate: %d %s", code, body)
	}
	if code, _ := do(t, http.DefaultClient, "GET", strings.Replace(url, "https://", "http://", 1), nil, nil); code == http.StatusOK {
		t.Fatal("logs served over plain HTTP")
	}
}

// TestSecurityUnsignedAssignmentIsRestored: an etcd writer strips the
// signature of a running topology's assignment. The supervisors would
// refuse it (a stall); the leader signs it again at once.
func TestSecurityUnsignedAssignmentIsRestored(t *testing.T) {
	c := newCluster(t, 2*time.Second)
	c.nimbus("n1")
	c.supervisor("s1", t.TempDir(), 7700)
	c.leader(60*time.Second, "")
	c.submit("wordcount")
	c.committing("wordcount", 60*time.Second, 0, "first commits", anyStatus)
	a, _ := c.assignment("wordcount")
	unsigned := a.Unsigned()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.cli.Put(ctx, c.keys.Assignment("wordcount"), meta.Encode(unsigned)); err != nil {
		t.Fatal(err)
	}
	roots := c.bundle("supervisor").Roots()
	if err := eventually(30*time.Second, func() bool {
		got, _ := c.assignment("wordcount")
		_, err := got.Verify(roots, time.Now())
		return err == nil
	}); err != nil {
		t.Fatalf("the leader left the assignment unsigned: %v", err)
	}
}
