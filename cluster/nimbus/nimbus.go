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
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/clock"
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
	Clock        clock.Clock
	Logger       *slog.Logger
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
	n := &Nimbus{cfg: cfg, ln: ln, url: "http://" + ln.Addr().String(), keys: meta.New(cfg.Prefix)}
	n.sched = newScheduler(n)
	n.store, err = codestore.New(codestore.Config{Client: cfg.Client, Prefix: cfg.Prefix, ID: cfg.ID, URL: n.url, Dir: dir,
		TTL: cfg.TTL, ScanInterval: cfg.ScanInterval, ReplicationFactor: cfg.ReplicationFactor,
		ReplicationTimeout: cfg.ReplicationTimeout, Logger: cfg.Logger})
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
	mux := http.NewServeMux()
	mux.Handle("/code/", n.store.Handler())
	mux.Handle("/api/", n.apiHandler())
	mux.Handle("GET /metrics", n.metricsHandler())
	mux.HandleFunc("GET /{$}", n.servePage)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
	if err := srv.Serve(n.ln); !errors.Is(err, http.ErrServerClosed) {
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
