package monitor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/squallstream/squall/internal/httpguard"
	"github.com/squallstream/squall/internal/logfile"
)

// DefaultAddr is where the server listens when Config.Addr is empty: the
// loopback interface, on a port the system picks (Server.Addr tells it).
const DefaultAddr = "127.0.0.1:0"

// MaxConns is how many connections Start's server holds open at once;
// more wait for one to close (idle ones close after
// httpguard.DefaultIdleTimeout).
const MaxConns = 64

// DefaultStopTimeout is how long a kill waits for batches in flight by
// default.
const DefaultStopTimeout = 30 * time.Second

// Config configures a Server. The zero Config is ready to use: every
// field left zero takes the default documented on it.
type Config struct {
	// Addr is the TCP address to listen on. Empty means DefaultAddr. An
	// address whose host is not a loopback IP or "localhost" (including
	// an empty host, which means every interface) needs a Token or an
	// Authenticator. Its host, if a name or an IP of its own, is one the
	// Host header of requests may carry (see Hosts).
	Addr string

	// ReadOnly refuses the actions (activate, deactivate, kill) with 403:
	// for a worker of a cluster, whose topology the nimbus controls.
	ReadOnly bool

	// Token, if set, is a bearer token ("Authorization: Bearer <token>")
	// that gives a request the admin identity, which POST actions, the
	// profiles under /debug/pprof and the logs then require. Empty means
	// none, which is only allowed on loopback without an Authenticator.
	Token string

	// Authenticator, if set, establishes the identity of requests from
	// their credentials, for example the peer certificate of a
	// mutual-TLS connection (httpguard.PeerCertificate, with TLS). Then
	// the actions, profiles and logs require the admin role
	// (httpguard.RoleAdmin) and every other route but the probes some
	// identity. With a Token too, the token is one more admin identity.
	Authenticator Authenticator

	// TLS, if set, makes Start serve HTTPS with it (URL says https). For
	// identities from client certificates set ClientCAs and ClientAuth
	// (tls.VerifyClientCertIfGiven or tls.RequireAndVerifyClientCert).
	TLS *tls.Config

	// Hosts are the names (and addresses) clients reach the server by,
	// besides Addr's host, the address a request arrives on, and
	// loopback names on loopback: a request whose Host header names none
	// of them is refused with 421 (DNS rebinding). Ports are ignored.
	Hosts []string

	// TrustedOrigins are origins ("https://console.example:8443") whose
	// browser pages may POST actions, which are otherwise refused to
	// cross-origin browser requests. Each must be scheme://host[:port].
	TrustedOrigins []string

	// Metrics is the registry /metrics serves; the server registers the
	// topologies' collector in it, and the refusals of its guards
	// (squall_http_refused_total{server="monitor"}). Nil means a new
	// registry holding those and the Go runtime and process collectors.
	Metrics *prometheus.Registry

	// StopTimeout bounds how long a kill waits for the batches in flight
	// before it stops the topology (see trident.Running.Stop); a request
	// may ask for another wait with ?timeout=. Zero means
	// DefaultStopTimeout.
	StopTimeout time.Duration

	// Logger receives the server's log lines (actions taken, requests
	// refused, serve errors). Nil means none.
	Logger *slog.Logger

	// LogFile is the JSON log file (as logfile.Writer writes it, one
	// slog.JSONHandler record a line) that GET /api/v1/logs and the UI's
	// log viewer read, with its rotated files LogFile.1, LogFile.2, ...
	// Empty means no log viewer.
	LogFile string

	// LogFiles is how many files of the log the viewer searches, LogFile
	// included; zero means logfile.DefaultMaxFiles (what a Writer keeps
	// by default).
	LogFiles int

	// SampleInterval is how often Start's server records the counters of
	// the registry's topologies for the windowed figures
	// (Registry.Sample). Zero means DefaultSampleInterval. A server built
	// with NewServer samples nothing: run Registry.SampleEvery.
	SampleInterval time.Duration
}

// Identity is who a request comes from: a role and a name
// (httpguard.Identity).
type Identity = httpguard.Identity

// Authenticator establishes the identity of a request from its
// credentials (httpguard.Authenticator).
type Authenticator = httpguard.Authenticator

// ErrTokenRequired is returned for a non-loopback Addr without a Token
// or an Authenticator.
var ErrTokenRequired = errors.New("monitor: a Token (or an Authenticator) is required to listen on a non-loopback address (actions would be open to the network)")

// ErrInvalid is wrapped by the errors of Config.Validate.
var ErrInvalid = errors.New("monitor: invalid config")

// Validate reports whether c can be used.
func (c Config) Validate() error {
	c = c.withDefaults()
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("%w: Addr %q: %w", ErrInvalid, c.Addr, err)
	}
	if c.StopTimeout < 0 {
		return fmt.Errorf("%w: StopTimeout %v is negative", ErrInvalid, c.StopTimeout)
	}
	if c.LogFiles < 0 {
		return fmt.Errorf("%w: LogFiles %d is negative", ErrInvalid, c.LogFiles)
	}
	if c.SampleInterval < 0 {
		return fmt.Errorf("%w: SampleInterval %v is negative", ErrInvalid, c.SampleInterval)
	}
	if c.Token == "" && c.Authenticator == nil && !httpguard.LoopbackAddr(c.Addr) {
		return fmt.Errorf("%w: Addr %q", ErrTokenRequired, c.Addr)
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		return fmt.Errorf("%w: TLS has no certificate", ErrInvalid)
	}
	for _, o := range c.TrustedOrigins {
		if err := http.NewCrossOriginProtection().AddTrustedOrigin(o); err != nil {
			return fmt.Errorf("%w: TrustedOrigins: %w", ErrInvalid, err)
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = DefaultStopTimeout
	}
	if c.SampleInterval == 0 {
		c.SampleInterval = DefaultSampleInterval
	}
	if c.LogFiles == 0 {
		c.LogFiles = logfile.DefaultMaxFiles
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Server serves the monitor's HTTP surface for the topologies of a
// Registry. Build one with NewServer to mount its Handler yourself, or
// with Start to listen and serve.
type Server struct {
	reg     *Registry
	cfg     Config
	metrics *prometheus.Registry
	guard   *httpguard.Guard
	handler http.Handler

	// set by Start
	ln       net.Listener
	http     *http.Server
	done     chan struct{} // closed when the serving goroutine returns
	serveErr error         // valid after done

	stopSampling context.CancelFunc
	sampled      chan struct{} // closed when the sampling goroutine returns
}

// NewServer checks cfg and builds the server's handler; it does not
// listen.
func NewServer(reg *Registry, cfg Config) (*Server, error) {
	if reg == nil {
		return nil, fmt.Errorf("%w: nil Registry", ErrInvalid)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Server{reg: reg, cfg: cfg, metrics: cfg.Metrics,
		guard: httpguard.New(httpguard.Config{Server: "monitor", Logger: cfg.Logger})}
	if s.metrics == nil {
		s.metrics = prometheus.NewRegistry()
		if err := s.metrics.Register(collectors.NewGoCollector()); err != nil {
			return nil, err
		}
		if err := s.metrics.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, err
		}
	}
	if err := s.metrics.Register(reg.Collector()); err != nil {
		return nil, fmt.Errorf("monitor: registering the collector: %w", err)
	}
	if err := s.metrics.Register(s.guard.Collector()); err != nil {
		return nil, fmt.Errorf("monitor: registering the refusals' collector: %w", err)
	}
	ui, err := newUI(reg, s.logsPage)
	if err != nil {
		return nil, err
	}
	if s.handler, err = s.routes(ui); err != nil {
		return nil, err
	}
	return s, nil
}

// Handler returns the server's handler, guards included, to mount in a
// server of your own (give it the budgets of httpguard.NewServer).
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on cfg.Addr and serves reg's topologies until Close,
// with httpguard's default budgets (timeouts, header size) and at most
// MaxConns connections at once.
func Start(reg *Registry, cfg Config) (*Server, error) {
	s, err := NewServer(reg, cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	srv, err := httpguard.NewServer(s.handler, httpguard.ServerConfig{TLS: s.cfg.TLS, Logger: s.cfg.Logger})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("monitor: %w", err)
	}
	limited := httpguard.LimitListener(ln, MaxConns)
	srv.ConnState = limited.ConnState
	s.ln, s.http = limited, srv
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		serve := func() error { return s.http.Serve(s.ln) }
		if s.cfg.TLS != nil {
			serve = func() error { return s.http.ServeTLS(s.ln, "", "") }
		}
		if err := serve(); !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = err
			s.cfg.Logger.Error("monitor: serving stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopSampling, s.sampled = cancel, make(chan struct{})
	go func() {
		defer close(s.sampled)
		s.reg.SampleEvery(ctx, s.cfg.SampleInterval)
	}()
	s.cfg.Logger.Info("monitor: serving", "addr", ln.Addr().String())
	return s, nil
}

// Addr returns the address the server listens on (nil before Start).
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// URL returns the server's base URL, such as "http://127.0.0.1:41327"
// ("https://..." with TLS; empty before Start).
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	if s.cfg.TLS != nil {
		return "https://" + s.ln.Addr().String()
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops the server: it stops sampling and accepting connections,
// waits for the requests in progress until ctx is done, then closes the
// remaining connections and waits for the serving goroutine. It returns the error
// that stopped serving, if any, or ctx's error if requests were cut off.
// A server built with NewServer has nothing to close.
func (s *Server) Close(ctx context.Context) error {
	if s.http == nil {
		return nil
	}
	s.stopSampling()
	<-s.sampled
	err := s.http.Shutdown(ctx)
	if err != nil {
		_ = s.http.Close()
	}
	<-s.done
	return errors.Join(s.serveErr, err)
}
