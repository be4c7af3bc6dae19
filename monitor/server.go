package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/squallstream/squall/monitor/logfile"
)

// DefaultAddr is where the server listens when Config.Addr is empty: the
// loopback interface, on a port the system picks (Server.Addr tells it).
const DefaultAddr = "127.0.0.1:0"

// DefaultStopTimeout is how long a kill waits for batches in flight by
// default.
const DefaultStopTimeout = 30 * time.Second

// Config configures a Server. The zero Config is ready to use: every
// field left zero takes the default documented on it.
type Config struct {
	// Addr is the TCP address to listen on. Empty means DefaultAddr. An
	// address whose host is not a loopback IP or "localhost" (including
	// an empty host, which means every interface) needs a Token.
	Addr string

	// ReadOnly refuses the actions (activate, deactivate, kill) with 403:
	// for a worker of a cluster, whose topology the nimbus controls.
	ReadOnly bool

	// Token, if set, is the bearer token that POST actions and the
	// profiles under /debug/pprof require ("Authorization: Bearer
	// <token>"). Empty means none, which is only allowed on loopback.
	Token string

	// Metrics is the registry /metrics serves; the server registers the
	// topologies' collector in it. Nil means a new registry holding that
	// collector and the Go runtime and process collectors.
	Metrics *prometheus.Registry

	// StopTimeout bounds how long a kill waits for the batches in flight
	// before it stops the topology (see trident.Running.Stop); a request
	// may ask for another wait with ?timeout=. Zero means
	// DefaultStopTimeout.
	StopTimeout time.Duration

	// Logger receives the server's log lines (actions taken, serve
	// errors). Nil means none.
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

// ErrTokenRequired is returned for a non-loopback Addr without a Token.
var ErrTokenRequired = errors.New("monitor: a Token is required to listen on a non-loopback address (actions would be open to the network)")

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
	if c.Token == "" && !isLoopback(c.Addr) {
		return fmt.Errorf("%w: Addr %q", ErrTokenRequired, c.Addr)
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

// isLoopback reports whether addr's host is a loopback IP or "localhost".
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server serves the monitor's HTTP surface for the topologies of a
// Registry. Build one with NewServer to mount its Handler yourself, or
// with Start to listen and serve.
type Server struct {
	reg     *Registry
	cfg     Config
	metrics *prometheus.Registry
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
	s := &Server{reg: reg, cfg: cfg, metrics: cfg.Metrics}
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
	ui, err := newUI(reg, s.logsPage)
	if err != nil {
		return nil, err
	}
	s.handler = s.routes(ui)
	return s, nil
}

// Handler returns the server's handler, to mount in a server of your own.
func (s *Server) Handler() http.Handler { return s.handler }

// Start listens on cfg.Addr and serves reg's topologies until Close.
func Start(reg *Registry, cfg Config) (*Server, error) {
	s, err := NewServer(reg, cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	s.ln = ln
	s.http = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
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
// (empty before Start).
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
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
