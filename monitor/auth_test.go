package monitor_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/squallstream/squall/monitor"
)

func TestTokenRequiredOffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":8080", "[::]:0", "192.0.2.1:80", "example.com:80"} {
		err := monitor.Config{Addr: addr}.Validate()
		if !errors.Is(err, monitor.ErrTokenRequired) {
			t.Errorf("Addr %q without a token: %v, want ErrTokenRequired", addr, err)
		}
		if _, err := monitor.Start(monitor.NewRegistry(), monitor.Config{Addr: addr}); !errors.Is(err, monitor.ErrTokenRequired) {
			t.Errorf("Start on %q without a token: %v, want ErrTokenRequired", addr, err)
		}
		if err := (monitor.Config{Addr: addr, Token: "s3cret"}).Validate(); err != nil {
			t.Errorf("Addr %q with a token: %v", addr, err)
		}
	}
	for _, addr := range []string{"", "127.0.0.1:0", "127.1.2.3:9", "[::1]:0", "localhost:0"} {
		if err := (monitor.Config{Addr: addr}).Validate(); err != nil {
			t.Errorf("loopback Addr %q: %v", addr, err)
		}
	}
	for _, c := range []monitor.Config{{Addr: "no-port"}, {StopTimeout: -time.Second}} {
		if err := c.Validate(); !errors.Is(err, monitor.ErrInvalid) {
			t.Errorf("%+v: %v, want ErrInvalid", c, err)
		}
	}
}

func TestTokenAuth(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words", nil, 0)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{Token: "s3cret"})

	h := wantError(t, ts, "POST", "/api/v1/topologies/words/deactivate", nil, http.StatusUnauthorized, "bearer token")
	if h.Get("WWW-Authenticate") == "" {
		t.Fatal("no WWW-Authenticate header")
	}
	wantError(t, ts, "POST", "/api/v1/topologies/words/deactivate", map[string]string{"Authorization": "Bearer wrong"}, http.StatusUnauthorized, "bearer token")
	wantError(t, ts, "POST", "/api/v1/topologies/words/deactivate", map[string]string{"Authorization": "s3cret"}, http.StatusUnauthorized, "bearer token")
	wantError(t, ts, "GET", "/debug/pprof/goroutine?debug=1", nil, http.StatusUnauthorized, "bearer token")

	auth := map[string]string{"Authorization": "Bearer s3cret"}
	var res monitor.ActionResult
	getJSON(t, ts, "POST", "/api/v1/topologies/words/deactivate", auth, http.StatusOK, &res)
	getJSON(t, ts, "POST", "/api/v1/topologies/words/activate", auth, http.StatusOK, &res)
	if code, _, _ := call(t, ts, "GET", "/debug/pprof/goroutine?debug=1", auth); code != http.StatusOK {
		t.Fatalf("pprof with the token: %d", code)
	}

	// Reading needs no token.
	var list monitor.TopologyList
	getJSON(t, ts, "GET", "/api/v1/topologies", nil, http.StatusOK, &list)
	if code, _, _ := call(t, ts, "GET", "/metrics", nil); code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
}

// A browser's cross-origin POST is refused even on loopback without a
// token: a page the operator visits cannot stop a topology.
func TestCrossOriginActionRefused(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words", nil, 0)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})
	wantError(t, ts, "POST", "/api/v1/topologies/words/kill", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://elsewhere.example"}, http.StatusForbidden, "")
	select {
	case <-r.Done():
		t.Fatal("a cross-origin kill stopped the topology")
	default:
	}
	// Tools that send no browser headers (curl) pass.
	var res monitor.ActionResult
	getJSON(t, ts, "POST", "/api/v1/topologies/words/deactivate", nil, http.StatusOK, &res)
}

// Start listens on loopback by default; Close stops every goroutine it
// started (TestMain checks for leaks).
func TestStartAndClose(t *testing.T) {
	s, err := monitor.Start(monitor.NewRegistry(), monitor.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr() == nil || s.URL() == "" {
		t.Fatal("no address")
	}
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(s.URL() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(s.URL() + "/healthz"); err == nil {
		t.Fatal("still serving after Close")
	}
}

// A read-only server (a cluster's worker) refuses every action and shows
// the rest.
func TestReadOnlyRefusesActions(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words", nil, 0)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{ReadOnly: true})
	for _, a := range []string{"activate", "deactivate", "kill"} {
		wantError(t, ts, "POST", "/api/v1/topologies/words/"+a, nil, http.StatusForbidden, "through the nimbus")
	}
	select {
	case <-r.Done():
		t.Fatal("a read-only kill stopped the topology")
	default:
	}
	var list monitor.TopologyList
	getJSON(t, ts, "GET", "/api/v1/topologies", nil, http.StatusOK, &list)
}
