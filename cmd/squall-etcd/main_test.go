package main

import (
	"io"
	"strings"
	"testing"

	"github.com/squallstream/squall/cluster/etcdembed"
)

func TestParseKeepsThePlaintextDefaults(t *testing.T) {
	// The command line of scripts/services.sh.
	c, level, err := parse(strings.Fields("-name m1 -data-dir d -client-url http://127.0.0.1:12379 -peer-url http://127.0.0.1:12380 "+
		"-initial-cluster m1=http://127.0.0.1:12380 -cluster-token squall-test-etcd -log-level warn"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := etcdembed.Config{Dir: "d", Name: "m1", ClientURL: "http://127.0.0.1:12379", PeerURL: "http://127.0.0.1:12380",
		InitialCluster: "m1=http://127.0.0.1:12380", ClusterToken: "squall-test-etcd", ReadyTimeout: c.ReadyTimeout,
		AuthToken: "simple", BcryptCost: etcdembed.DefaultBcryptCost}
	if c != want || level != "warn" {
		t.Fatalf("parse = %+v, %q\nwant %+v, warn", c, level, want)
	}
	if c, _, _ = parse([]string{"-data-dir", "d"}, io.Discard); c.ClientURL != defaultClientURL || c.PeerURL != defaultPeerURL || c.CertFile != "" {
		t.Errorf("defaults: %+v", c)
	}
}

func TestParseTLSFlags(t *testing.T) {
	c, _, err := parse(strings.Fields("-data-dir d -cert-file s.pem -key-file s-key.pem -trusted-ca-file ca.pem -client-cert-auth "+
		"-peer-cert-file p.pem -peer-key-file p-key.pem -peer-trusted-ca-file pca.pem -peer-client-cert-auth -auth-token jwt,x -bcrypt-cost 4"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.CertFile != "s.pem" || c.KeyFile != "s-key.pem" || c.TrustedCAFile != "ca.pem" || !c.ClientCertAuth ||
		c.PeerCertFile != "p.pem" || c.PeerKeyFile != "p-key.pem" || c.PeerTrustedCAFile != "pca.pem" || !c.PeerClientCertAuth ||
		c.AuthToken != "jwt,x" || c.BcryptCost != 4 {
		t.Errorf("parse = %+v", c)
	}
	// Certificates switch the default URLs to https, not URLs given.
	if c.ClientURL != "https://127.0.0.1:2379" || c.PeerURL != "https://127.0.0.1:2380" {
		t.Errorf("URLs with certificates = %s, %s; want https", c.ClientURL, c.PeerURL)
	}
	for _, bad := range []string{
		"-data-dir d -cert-file s.pem -key-file k.pem -client-url http://127.0.0.1:2379", // a certificate, a plain URL
		"-data-dir d -client-cert-auth",                                  // no TLS
		"-data-dir d -cert-file s.pem -key-file k.pem -client-cert-auth", // no CA
		"-data-dir d -peer-cert-file p.pem",                              // no key
		"-data-dir d -bcrypt-cost 2",
		"-cert-file s.pem -key-file k.pem", // no data dir
	} {
		if _, _, err := parse(strings.Fields(bad), io.Discard); err == nil {
			t.Errorf("parse(%s) = nil error", bad)
		}
	}
}
