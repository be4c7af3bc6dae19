package nimbus

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/httpguard"
)

// TestWithoutCertificateOnlyReads: however permissive the policy, a
// request without a certificate (admitted on loopback as RoleLocal) may
// read and nothing else; a plain nimbus refuses to listen off loopback.
func TestWithoutCertificateOnlyReads(t *testing.T) {
	ca, err := pki.NewAuthority("t", 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ca.Issue(pki.Request{Role: pki.Nimbus, Name: "n1", Hosts: []string{"127.0.0.1"}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	allowAll := PolicyFunc(func(httpguard.Identity, Action, *meta.Spec) error { return nil })
	n, err := New(Config{Client: cli, Prefix: "/p", ID: "n1", CodeDir: t.TempDir(), TTL: time.Second, Bundle: b,
		Policy: allowAll, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, n)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: b.Roots()}}}
	addr := n.ln.Addr().String()
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/api/topologies", http.StatusOK},
		{"POST", "/api/topologies/wc", http.StatusForbidden},
		{"DELETE", "/api/topologies/wc", http.StatusForbidden},
		{"POST", "/api/topologies/wc/deactivate", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(tc.method, "https://"+addr+tc.path, strings.NewReader("code"))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s without a certificate: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
	if _, err := New(Config{Client: cli, ID: "n2", CodeDir: t.TempDir(), Addr: "0.0.0.0:0"}); err == nil {
		t.Error("a nimbus without certificates listens off loopback")
	}
}
