// Package nimbus puts a nimbus together from its parts: the code store
// (codestore), the election with the seed rule (leader), the scheduling
// loop of the leader, and one HTTP server for the other nimbuses (code)
// and for the command line (the API, see api.go).
//
// Keys under Config.Prefix (default "/squall") are those of package meta.
//
// Every leader-only request asks the candidate for its Leadership first; a
// standby answers with a *leader.NotLeaderError naming the leader. Every
// write of the leader goes through Leadership.Write, fenced by the
// election key's revision.
package nimbus

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/internal/httpguard"
)

// Defaults of the zero Config's scheduling fields.
const (
	DefaultScheduleDelay  = 500 * time.Millisecond
	DefaultResyncInterval = 10 * time.Second
	DefaultFailureLimit   = 3
	DefaultAvoidFor       = 5 * time.Minute
)

// Config of a Nimbus. Zero values of the durations and the replication
// factor take the defaults of the leader and codestore packages.
type Config struct {
	Client *clientv3.Client // required
	Prefix string           // default "/squall"
	ID     string           // unique among nimbuses (required)
	Addr   string           // listen address (default "127.0.0.1:0"), unless Listener is set
	// Listener, if set, is used instead of listening on Addr; the nimbus
	// closes it.
	Listener net.Listener
	CodeDir  string // artifacts directory (required)
	// TTL of the election and holder leases: a leader that stops renewing
	// (crash, pause, partition) is replaced within TTL.
	TTL                time.Duration
	ScanInterval       time.Duration
	ReplicationFactor  int
	ReplicationTimeout time.Duration
	// ScheduleDelay is how long the leader lets changes settle before it
	// schedules (default 500ms); ResyncInterval how often it schedules
	// without a change (default 10s).
	ScheduleDelay, ResyncInterval time.Duration
	// FailureLimit: a slot whose worker failed to start that many times in
	// a row (the supervisor's Crash.Failures) is avoided for AvoidFor, and
	// its topology rescheduled elsewhere when a slot is free (defaults 3
	// and 5 minutes).
	FailureLimit int
	AvoidFor     time.Duration
	// Bundle is this nimbus's certificate (role nimbus) and the cluster
	// CA. With it the nimbus serves HTTPS with mutual TLS, authorizes every
	// request (see Policy), fetches code only from nimbuses, and signs the
	// assignments it writes. Without it (tests, loopback only) it serves
	// plain HTTP and signs nothing.
	Bundle *pki.Bundle
	// WorkerCredentials has the leader give each topology an etcd user
	// of its own (package etcdauth: a role limited to the topology's
	// keys) at its first submit, stored in credentials/<topology> for the
	// supervisors to hand to its workers, and remove it at kill. The
	// nimbus's etcd client must then act as etcd's root user.
	WorkerCredentials bool
	// Policy decides who may change what (nil: DefaultPolicy).
	Policy Policy
	// MaxArtifactBytes bounds an uploaded artifact (default
	// DefaultMaxArtifactBytes); MaxUploads the uploads at once (default
	// DefaultMaxUploads).
	MaxArtifactBytes int64
	MaxUploads       int
	Clock            clock.Clock
	Logger           *slog.Logger
}

// Nimbus is one nimbus daemon's cluster side.
type Nimbus struct {
	cfg   Config
	ln    net.Listener
	url   string
	store *codestore.Store
	cand  *leader.Candidate
	keys  meta.Layout
	sched *scheduler
	guard *httpguard.Guard

	refused atomic.Int64 // assignments found unsigned or badly signed

	specMu sync.Mutex // serializes the leader's spec writes
}

// New listens on Config.Addr and builds the parts; Run starts them.
func New(cfg Config) (*Nimbus, error) {
	if cfg.Client == nil || cfg.ID == "" || cfg.CodeDir == "" {
		return nil, errors.New("nimbus: Config.Client, ID and CodeDir are required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "/squall"
	}
	cfg.Prefix = strings.TrimSuffix(cfg.Prefix, "/")
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ScheduleDelay == 0 {
		cfg.ScheduleDelay = DefaultScheduleDelay
	}
	if cfg.ResyncInterval == 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.FailureLimit == 0 {
		cfg.FailureLimit = DefaultFailureLimit
	}
	if cfg.AvoidFor == 0 {
		cfg.AvoidFor = DefaultAvoidFor
	}
	if cfg.Policy == nil {
		cfg.Policy = DefaultPolicy
	}
	if cfg.MaxArtifactBytes == 0 {
		cfg.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	if cfg.MaxUploads == 0 {
		cfg.MaxUploads = DefaultMaxUploads
	}
	if cfg.MaxArtifactBytes < 0 || cfg.MaxUploads < 0 {
		return nil, errors.New("nimbus: negative MaxArtifactBytes or MaxUploads")
	}
	cfg.Clock = clock.Or(cfg.Clock)
	dir, err := codestore.OpenDir(cfg.CodeDir)
	if err != nil {
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, fmt.Errorf("nimbus: %w", err)
		}
	}
	if cfg.Bundle == nil && !httpguard.LoopbackAddr(ln.Addr().String()) {
		ln.Close()
		return nil, fmt.Errorf("%w, not on %s", errPlainOffLoopback, ln.Addr())
	}
	scheme := "http://"
	var httpClient *http.Client
	if cfg.Bundle != nil {
		scheme = "https://"
		httpClient = &http.Client{Timeout: transferTime, Transport: &http.Transport{TLSClientConfig: cfg.Bundle.ClientTLS(pki.Nimbus)}}
	}
	n := &Nimbus{cfg: cfg, ln: ln, url: scheme + advertised(cfg.ID, ln), keys: meta.New(cfg.Prefix),
		guard: httpguard.New(httpguard.Config{Server: "nimbus", Logger: cfg.Logger, WriteError: httpguard.JSONError})}
	n.sched = newScheduler(n)
	n.store, err = codestore.New(codestore.Config{Client: cfg.Client, Prefix: cfg.Prefix, ID: cfg.ID, URL: n.url, Dir: dir,
		TTL: cfg.TTL, ScanInterval: cfg.ScanInterval, ReplicationFactor: cfg.ReplicationFactor,
		ReplicationTimeout: cfg.ReplicationTimeout, HTTPClient: httpClient, Logger: cfg.Logger})
	if err == nil {
		n.cand, err = leader.New(leader.Config{Client: cfg.Client, Prefix: cfg.Prefix + "/nimbus/leader", ID: cfg.ID,
			TTL: cfg.TTL, Ready: n.store.Ready, Wake: n.store.Changed, Logger: cfg.Logger})
	}
	if err != nil {
		ln.Close()
		return nil, err
	}
	return n, nil
}

// URL is where this nimbus serves code to the others.
func (n *Nimbus) URL() string { return n.url }

// Store is this nimbus's code store.
func (n *Nimbus) Store() *codestore.Store { return n.store }

// Candidate is this nimbus's candidacy.
func (n *Nimbus) Candidate() *leader.Candidate { return n.cand }

// Run serves and campaigns until ctx is done, then stops everything
// (resigning a leadership it holds) and returns ctx's error.
func (n *Nimbus) Run(ctx context.Context) error {
	srv, err := n.server()
	if err != nil {
		n.ln.Close()
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var serveErr error
	wg.Add(3)
	go func() { defer wg.Done(); n.store.Run(rctx) }()
	go func() { defer wg.Done(); n.cand.Run(rctx) }()
	go func() { defer wg.Done(); n.sched.run(rctx) }()
	stop := context.AfterFunc(rctx, func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		srv.Shutdown(sctx)
	})
	defer stop()
	ln := n.ln
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		serveErr = fmt.Errorf("nimbus: serving code: %w", err)
	}
	cancel()
	wg.Wait()
	if serveErr != nil {
		return serveErr
	}
	return ctx.Err()
}

// Submit stores a topology's code and waits for its replication
// (codestore.Store.Upload). Leader only.
func (n *Nimbus) Submit(ctx context.Context, topology string, code io.Reader) (codestore.Digest, error) {
	l, err := n.cand.Leadership(ctx)
	if err != nil {
		return codestore.Digest{}, err
	}
	return n.store.Upload(ctx, l, topology, code)
}

// AssignmentKey is where a topology's assignment is stored.
func (n *Nimbus) AssignmentKey(topology string) string { return n.keys.Assignment(topology) }

// ID is this nimbus's ID, the value of its election key.
func (n *Nimbus) ID() string { return n.cfg.ID }

// WriteAssignment stores a topology's assignment. Leader only; fenced.
func (n *Nimbus) WriteAssignment(ctx context.Context, topology string, value []byte) error {
	l, err := n.cand.Leadership(ctx)
	if err != nil {
		return err
	}
	_, err = l.Write(ctx, clientv3.OpPut(n.AssignmentKey(topology), string(value)))
	return err
}

// advertised is the address others reach a nimbus at: its ID when it is
// an address, else its listener's.
func advertised(id string, ln net.Listener) string {
	if _, _, err := net.SplitHostPort(id); err == nil {
		return id
	}
	return ln.Addr().String()
}

// Guard is the nimbus's HTTP guard: its refusal counts.
func (n *Nimbus) Guard() *httpguard.Guard { return n.guard }
