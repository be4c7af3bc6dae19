package httpguard

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// The budgets of a server built by NewServer with a zero ServerConfig.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = time.Minute
	DefaultWriteTimeout      = time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
)

// ErrInvalid is wrapped by the errors of ServerConfig.Validate.
var ErrInvalid = errors.New("httpguard: invalid config")

// ServerConfig configures NewServer. The zero ServerConfig is ready to
// use: every field left zero takes the default documented on it.
type ServerConfig struct {
	// ReadHeaderTimeout bounds reading a request's line and headers.
	// Zero means DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration

	// ReadTimeout bounds reading a whole request, body included, from
	// the start of its headers: a client trickling its body is cut
	// there. A route that takes large uploads extends its own deadline
	// (Extend, Guard.Deadlines). Zero means DefaultReadTimeout.
	ReadTimeout time.Duration

	// WriteTimeout bounds the time from the end of a request's headers
	// to the end of its answer. A route that streams large or slow
	// answers (artifact downloads, profiles) extends its own deadline
	// (Extend, Guard.Deadlines). Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration

	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request before it is closed. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration

	// MaxHeaderBytes bounds the size of a request's line and headers.
	// Zero means DefaultMaxHeaderBytes.
	MaxHeaderBytes int

	// TLS, if set, is the server's TLS configuration (http.Server's
	// TLSConfig: serve with ServeTLS(ln, "", "") or through
	// tls.NewListener). For peer-certificate identities set ClientAuth
	// to tls.VerifyClientCertIfGiven or tls.RequireAndVerifyClientCert
	// and ClientCAs: only verified chains count. Nil means plain HTTP.
	TLS *tls.Config

	// Logger receives net/http's own error lines (failed handshakes,
	// panics in handlers) at Warn. Nil means none.
	Logger *slog.Logger
}

// Validate reports whether c can be used.
func (c ServerConfig) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ReadHeaderTimeout", c.ReadHeaderTimeout}, {"ReadTimeout", c.ReadTimeout},
		{"WriteTimeout", c.WriteTimeout}, {"IdleTimeout", c.IdleTimeout},
	} {
		if d.v < 0 {
			return fmt.Errorf("%w: %s %v is negative", ErrInvalid, d.name, d.v)
		}
	}
	if c.MaxHeaderBytes < 0 {
		return fmt.Errorf("%w: MaxHeaderBytes %d is negative", ErrInvalid, c.MaxHeaderBytes)
	}
	return nil
}

func (c ServerConfig) withDefaults() ServerConfig {
	if c.ReadHeaderTimeout == 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// NewServer returns a server for h with every budget of cfg set. It does
// not listen: call Serve (or ServeTLS) on a listener, Shutdown to stop.
func NewServer(h http.Handler, cfg ServerConfig) (*http.Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		TLSConfig:         cfg.TLS,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}, nil
}

// Extend moves the read and write deadlines of the connection serving w
// to read and write from now; a zero duration leaves that deadline as
// the server set it. A handler calls it before a transfer it knows to be
// long (an artifact upload or download, a profile of N seconds), so
// that only this request escapes the server's ReadTimeout and
// WriteTimeout. It fails (http.ErrNotSupported) when w does not reach a
// connection, for example behind a wrapper without an Unwrap method.
func Extend(w http.ResponseWriter, read, write time.Duration) error {
	rc := http.NewResponseController(w)
	var errs []error
	if read > 0 {
		errs = append(errs, rc.SetReadDeadline(time.Now().Add(read)))
	}
	if write > 0 {
		errs = append(errs, rc.SetWriteDeadline(time.Now().Add(write)))
	}
	return errors.Join(errs...)
}
