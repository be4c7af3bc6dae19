package etcdembed

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSingleNodeServesAndKeepsDataAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	put := func(s *Server, key, val string) {
		t.Helper()
		cli, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if val != "" {
			if _, err := cli.Put(ctx, key, val); err != nil {
				t.Fatal(err)
			}
			return
		}
		resp, err := cli.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v1" {
			t.Fatalf("after restart %s = %v, want v1", key, resp.Kvs)
		}
	}

	s, err := Start(ctx, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if eps := s.Endpoints(); len(eps) != 1 || !strings.HasPrefix(eps[0], "127.0.0.1:") || strings.HasSuffix(eps[0], ":0") {
		t.Fatalf("Endpoints = %v, want one bound loopback address", eps)
	}
	put(s, "k", "v1")
	s.Close()

	s, err = Start(ctx, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put(s, "k", "")
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Dir: "x", ClientURL: "127.0.0.1:2379"},
		{Dir: "x", PeerURL: "https://"},
		{Dir: "x", ReadyTimeout: -1},
		{Dir: "x", ClientURL: "https://127.0.0.1:2379"},                          // https without a certificate
		{Dir: "x", CertFile: "c.pem"},                                            // no key
		{Dir: "x", KeyFile: "k.pem"},                                             // no certificate
		{Dir: "x", CertFile: "c", KeyFile: "k", ClientURL: "http://127.0.0.1:1"}, // a certificate, plain URL
		{Dir: "x", TrustedCAFile: "ca.pem"},                                      // a CA, no TLS
		{Dir: "x", CertFile: "c", KeyFile: "k", ClientCertAuth: true},            // certificate auth without a CA
		{Dir: "x", PeerURL: "https://127.0.0.1:2380"},
		{Dir: "x", PeerCertFile: "c"},
		{Dir: "x", PeerCertFile: "c", PeerKeyFile: "k", PeerURL: "http://127.0.0.1:1"},
		{Dir: "x", PeerTrustedCAFile: "ca"},
		{Dir: "x", PeerCertFile: "c", PeerKeyFile: "k", PeerClientCertAuth: true},
		{Dir: "x", BcryptCost: 3},
		{Dir: "x", BcryptCost: 32},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", c)
		}
	}
	for _, c := range []Config{
		{Dir: "x"},
		{Dir: "x", CertFile: "c", KeyFile: "k"}, // the default client URL becomes https
		{Dir: "x", CertFile: "c", KeyFile: "k", TrustedCAFile: "ca", ClientCertAuth: true, ClientURL: "https://127.0.0.1:2379",
			PeerCertFile: "c", PeerKeyFile: "k", PeerTrustedCAFile: "ca", PeerClientCertAuth: true, PeerURL: "https://127.0.0.1:2380",
			BcryptCost: 4, AuthToken: "simple"},
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v): %v", c, err)
		}
	}
	if u := (Config{Dir: "x", CertFile: "c", KeyFile: "k"}).clientURL(); u != "https://127.0.0.1:0" {
		t.Errorf("default client URL with a certificate = %s, want https://127.0.0.1:0", u)
	}
}

func TestStartFailsFastOnBusyPort(t *testing.T) {
	ctx := context.Background()
	s, err := Start(ctx, Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Start(ctx, Config{Dir: t.TempDir(), ClientURL: "http://" + s.Endpoints()[0]})
	if err == nil {
		t.Fatal("second member on the same client port started")
	}
}
