// Package etcdembed runs an etcd member inside the calling process: the
// single-node etcd of squall's future `dev` mode, the members of the test
// cluster that cmd/squall-etcd starts, and the etcd of fast unit tests.
//
// Start returns once the member serves linearizable requests (it has
// joined a cluster with a leader), or fails; Close stops it and waits for
// its goroutines. etcd's own logs go to the zap logger of Config.Logger; the
// zero value discards them, so a test or a dev run is not flooded by them.
//
// A zero port in a URL ("http://127.0.0.1:0") picks a free port for a
// single-node member; Endpoints reports the addresses really bound. A
// member of a multi-node cluster needs fixed peer ports, since the others
// dial them from InitialCluster.
//
// # TLS and authentication
//
// The zero Config serves plain HTTP on loopback, with no authentication:
// the embedded etcd of `dev` and of tests. CertFile and KeyFile switch
// the client URL to TLS (https), and PeerCertFile and PeerKeyFile the peer
// URL; TrustedCAFile and PeerTrustedCAFile refuse a client or a peer
// without a certificate their CA signed, and ClientCertAuth takes a client
// certificate's CommonName as its etcd user. The fields carry the names
// of etcd's own flags (--cert-file, --key-file, --trusted-ca-file,
// --client-cert-auth, --peer-…).
//
// etcd's authentication (users, roles, permissions) lives in etcd's data,
// not in its configuration: any member can have it enabled through the
// API (package cluster/etcdauth does it for a squall cluster). With
// ClientCertAuth a client presenting no user name and password is the
// user named by its certificate's CommonName. AuthToken and BcryptCost
// tune it (etcd's --auth-token and --bcrypt-cost).
package etcdembed

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Defaults of the zero Config.
const (
	DefaultName         = "squall"
	DefaultClientURL    = "http://127.0.0.1:0"
	DefaultPeerURL      = "http://127.0.0.1:0"
	DefaultReadyTimeout = 60 * time.Second
	DefaultBcryptCost   = 10 // bcrypt's default, etcd's
)

// The bounds of Config.BcryptCost (bcrypt's).
const minBcryptCost, maxBcryptCost = 4, 31

// Config describes one member. Dir is required; every other zero value has
// a default.
type Config struct {
	// Dir holds the member's data (WAL and snapshots). A member started
	// again on the same Dir keeps its data and its cluster membership.
	Dir string
	// Name of the member, unique in its cluster (default "squall").
	Name string
	// ClientURL is where clients connect (default http://127.0.0.1:0, a
	// free port); PeerURL is where the other members connect (default
	// http://127.0.0.1:0, which suits a single-node cluster only).
	ClientURL, PeerURL string
	// InitialCluster lists every member as name=peerURL, comma-separated,
	// as etcd's --initial-cluster flag does. Empty means a single-node
	// cluster of this member.
	InitialCluster string
	// ClusterToken keeps separate clusters on one machine apart (default
	// "squall-etcd").
	ClusterToken string
	// ReadyTimeout bounds how long Start waits for the member to serve
	// (default 60s): for a multi-node cluster, until a quorum has started.
	ReadyTimeout time.Duration
	// Logger receives etcd's logs; nil discards them.
	Logger *zap.Logger
	// TickInterval and ElectionTimeout are raft's heartbeat interval and
	// election timeout (defaults 100ms and 1s, etcd's own).
	TickInterval, ElectionTimeout time.Duration

	// CertFile and KeyFile (PEM) are the certificate and key the member
	// serves its clients with; both or neither. With them the client URL
	// must be https (the zero ClientURL becomes https://127.0.0.1:0), and
	// the certificate should allow client authentication too (extended
	// key usage clientAuth): etcd's gateway dials the member with it.
	CertFile, KeyFile string
	// TrustedCAFile (PEM) is the CA of the clients' certificates: with
	// it the member refuses, in the TLS handshake, every client without a
	// certificate the CA signed (etcd's behaviour). ClientCertAuth (which
	// needs TrustedCAFile) also makes etcd's authentication take the
	// certificate's CommonName as the user of a request that carries no
	// user name and password (etcd's --client-cert-auth).
	TrustedCAFile  string
	ClientCertAuth bool
	// PeerCertFile and PeerKeyFile (PEM) are the member's certificate and
	// key towards the other members, as server and as client (extended
	// key usages serverAuth and clientAuth; an IP or DNS name of the peer
	// URL); with them the peer URL must be https. PeerTrustedCAFile is
	// the CA of the other members' certificates: with it a peer without a
	// certificate the CA signed is refused. PeerClientCertAuth (which
	// needs PeerTrustedCAFile) is etcd's --peer-client-cert-auth: the
	// same refusal, named explicitly.
	PeerCertFile, PeerKeyFile string
	PeerTrustedCAFile         string
	PeerClientCertAuth        bool

	// AuthToken is etcd's --auth-token: "simple" (the default) or
	// "jwt,pub-key=…,priv-key=…,sign-method=…". It matters once
	// authentication is enabled.
	AuthToken string
	// BcryptCost is the cost of the password hashes of etcd users
	// (default 10, bcrypt's; 4 to 31). Tests lower it to save time.
	BcryptCost int
}

// Validate reports a Config that Start would refuse.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("etcdembed: Config.Dir is required")
	}
	if err := c.validateTLS(); err != nil {
		return err
	}
	if _, err := parseURL(c.clientURL(), c.clientTLS().enabled()); err != nil {
		return err
	}
	if _, err := parseURL(c.peerURL(), c.peerTLS().enabled()); err != nil {
		return err
	}
	if c.ReadyTimeout < 0 || c.TickInterval < 0 || c.ElectionTimeout < 0 {
		return errors.New("etcdembed: negative duration in Config")
	}
	if c.BcryptCost != 0 && (c.BcryptCost < minBcryptCost || c.BcryptCost > maxBcryptCost) {
		return fmt.Errorf("etcdembed: BcryptCost %d: want %d to %d", c.BcryptCost, minBcryptCost, maxBcryptCost)
	}
	return nil
}

// clientURL and peerURL return the URLs with their defaults: https when
// the member has a certificate for that side.
func (c Config) clientURL() string {
	if c.ClientURL != "" {
		return c.ClientURL
	}
	if c.clientTLS().enabled() {
		return "https" + strings.TrimPrefix(DefaultClientURL, "http")
	}
	return DefaultClientURL
}

func (c Config) peerURL() string {
	if c.PeerURL != "" {
		return c.PeerURL
	}
	if c.peerTLS().enabled() {
		return "https" + strings.TrimPrefix(DefaultPeerURL, "http")
	}
	return DefaultPeerURL
}

// parseURL parses a client or peer URL: https://host:port if the side
// has TLS, http://host:port if not.
func parseURL(s string, tls bool) (url.URL, error) {
	want := "http"
	if tls {
		want = "https"
	}
	u, err := url.Parse(s)
	if err != nil {
		return url.URL{}, fmt.Errorf("etcdembed: bad URL %q: %w", s, err)
	}
	if u.Scheme != want || u.Host == "" {
		hint := ""
		if u.Scheme == "https" && !tls {
			hint = " (https needs a certificate and key)"
		} else if u.Scheme == "http" && tls {
			hint = " (a certificate is configured for it)"
		}
		return url.URL{}, fmt.Errorf("etcdembed: bad URL %q: want %s://host:port%s", s, want, hint)
	}
	return *u, nil
}

// Server is a running member.
type Server struct {
	etcd *embed.Etcd
}

// Start starts a member and waits until it serves requests, ctx is done, or
// Config.ReadyTimeout passes; on failure nothing is left running.
func Start(ctx context.Context, c Config) (*Server, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Dir = c.Dir
	cfg.Name = cmp.Or(c.Name, DefaultName)
	curl, _ := parseURL(c.clientURL(), c.clientTLS().enabled())
	purl, _ := parseURL(c.peerURL(), c.peerTLS().enabled())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{curl}, []url.URL{curl}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{purl}, []url.URL{purl}
	cfg.InitialCluster = cmp.Or(c.InitialCluster, cfg.Name+"="+purl.String())
	cfg.InitialClusterToken = cmp.Or(c.ClusterToken, "squall-etcd")
	cfg.TickMs = uint(cmp.Or(c.TickInterval, 100*time.Millisecond) / time.Millisecond)
	cfg.ElectionMs = uint(cmp.Or(c.ElectionTimeout, time.Second) / time.Millisecond)
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(cmp.Or(c.Logger, zap.NewNop()))
	cfg.LogOutputs = []string{embed.StdErrLogOutput} // unused: the builder above wins
	cfg.Metrics = "basic"
	cfg.ClientTLSInfo = c.clientTLS().info()
	cfg.PeerTLSInfo = c.peerTLS().info()
	cfg.AuthToken = cmp.Or(c.AuthToken, embed.DefaultAuthToken)
	cfg.BcryptCost = uint(cmp.Or(c.BcryptCost, DefaultBcryptCost))

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcdembed: start %s: %w", cfg.Name, err)
	}
	timer := time.NewTimer(cmp.Or(c.ReadyTimeout, DefaultReadyTimeout))
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return &Server{etcd: e}, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcdembed: %s failed while starting: %w", cfg.Name, err)
	case <-ctx.Done():
		e.Close()
		return nil, fmt.Errorf("etcdembed: %s not ready: %w", cfg.Name, ctx.Err())
	case <-timer.C:
		e.Close()
		return nil, fmt.Errorf("etcdembed: %s not ready within %v (for a cluster: have a quorum of its members started?)",
			cfg.Name, cmp.Or(c.ReadyTimeout, DefaultReadyTimeout))
	}
}

// Endpoints returns the client addresses the member really listens on, as
// host:port (what clientv3.Config.Endpoints takes).
func (s *Server) Endpoints() []string {
	var eps []string
	for _, l := range s.etcd.Clients {
		eps = append(eps, l.Addr().String())
	}
	return eps
}

// Err reports a fatal error of the running member (its channel is closed
// once Close has run).
func (s *Server) Err() <-chan error { return s.etcd.Err() }

// Close stops the member and waits until it has stopped. Its data stays in
// Config.Dir.
func (s *Server) Close() { s.etcd.Close() }

// String names the member and its endpoints.
func (s *Server) String() string {
	return fmt.Sprintf("etcd member %s at %s", s.etcd.Config().Name, strings.Join(s.Endpoints(), ","))
}
