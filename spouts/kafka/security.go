package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// The SASL mechanisms SASLConfig.Mechanism accepts.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// ErrAuthentication is matched by the error of New (and of a later request)
// when the brokers and the spout could not set up an authenticated
// connection: the broker rejected the SASL mechanism, user or password, or
// the TLS handshake failed (a certificate from an unknown authority, a
// server name that does not match, a listener that does not speak TLS).
// Retrying does not help; the configuration must change.
var ErrAuthentication = errors.New("kafka: authentication failed")

// SASLConfig authenticates every connection of the spout with SASL. The
// zero value (no Mechanism) turns SASL off.
type SASLConfig struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (any case).
	// PLAIN sends the password as it is: use it with TLS.
	Mechanism string
	// Username and Password are the credentials; both are required with a
	// Mechanism. The password never appears in errors, logs or String.
	Username string
	Password string
}

// Enabled reports whether a mechanism is set.
func (s SASLConfig) Enabled() bool { return s.Mechanism != "" }

// String describes the configuration without the password:
// `SCRAM-SHA-256 as "squall"`, or "off".
func (s SASLConfig) String() string {
	if !s.Enabled() {
		return "off"
	}
	return fmt.Sprintf("%s as %q", strings.ToUpper(s.Mechanism), s.Username)
}

// GoString is String, so that %#v does not print the password either.
func (s SASLConfig) GoString() string { return "kafka.SASLConfig{" + s.String() + "}" }

func (s SASLConfig) validate() []error {
	if !s.Enabled() {
		if s.Username != "" || s.Password != "" {
			return []error{errors.New("SASL: Username or Password without a Mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)")}
		}
		return nil
	}
	var errs []error
	switch strings.ToUpper(s.Mechanism) {
	case MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
	default:
		errs = append(errs, fmt.Errorf("SASL: unknown Mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", s.Mechanism))
	}
	switch {
	case s.Username == "":
		errs = append(errs, fmt.Errorf("SASL: Mechanism %s without a Username", s.Mechanism))
	case s.Password == "":
		errs = append(errs, fmt.Errorf("SASL: user %q without a Password", s.Username))
	}
	return errs
}

// Build returns the kafka-go mechanism, or nil with SASL off. It is what
// the spout uses; other clients of the same brokers (tools, producers) can
// use it too.
func (s SASLConfig) Build() (sasl.Mechanism, error) {
	if errs := s.validate(); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
	}
	switch strings.ToUpper(s.Mechanism) {
	case "":
		return nil, nil
	case MechanismPlain:
		return plain.Mechanism{Username: s.Username, Password: s.Password}, nil
	case MechanismSCRAMSHA256:
		return scram.Mechanism(scram.SHA256, s.Username, s.Password)
	default:
		return scram.Mechanism(scram.SHA512, s.Username, s.Password)
	}
}

// TLSConfig encrypts every connection of the spout with TLS. A nil
// *TLSConfig in Config means plaintext; a zero TLSConfig means TLS that
// trusts the system's certificate authorities.
type TLSConfig struct {
	// CAFile is a PEM file of the certificate authorities that sign the
	// brokers' certificates. Empty means the system's.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key, for
	// brokers that require one (ssl.client.auth=required). Both or neither.
	CertFile string
	KeyFile  string
	// ServerName is the name the brokers' certificates must carry. Empty
	// means the host of each broker address.
	ServerName string
	// InsecureSkipVerify turns off the verification of the brokers'
	// certificates. For tests only: anyone on the path can read and change
	// the traffic.
	InsecureSkipVerify bool
}

// Build loads the files and returns the crypto/tls configuration (nil for
// a nil t). Errors match ErrInvalidConfig.
func (t *TLSConfig) Build() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: TLS: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, bad("CAFile: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, bad("CAFile %s holds no PEM certificate", t.CAFile)
		}
	}
	switch {
	case t.CertFile != "" && t.KeyFile != "":
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, bad("client certificate %s and key %s: %w", t.CertFile, t.KeyFile, err)
		}
		c.Certificates = []tls.Certificate{cert}
	case t.CertFile != "" || t.KeyFile != "":
		return nil, bad("CertFile and KeyFile go together (CertFile %q, KeyFile %q)", t.CertFile, t.KeyFile)
	}
	return c, nil
}

// newTransport is the one constructor of the spout's connections: every
// request (metadata, offsets, fetches, the offset mirror's commits and the
// dead-letter writer's produce requests) goes through the transport it
// returns, so SASL and TLS apply to all of them.
func newTransport(cfg Config) (*kafkago.Transport, error) {
	mech, err := cfg.SASL.Build()
	if err != nil {
		return nil, err
	}
	tc, err := cfg.TLS.Build()
	if err != nil {
		return nil, err
	}
	if mech != nil && tc == nil && strings.EqualFold(cfg.SASL.Mechanism, MechanismPlain) {
		cfg.Logger.Warn("kafka spout: SASL PLAIN without TLS sends the password in clear text", "user", cfg.SASL.Username)
	}
	return &kafkago.Transport{
		DialTimeout: cfg.DialTimeout,
		// Fetches are routed with cached metadata, and metadata requests
		// are answered from the cache: refreshing it twice per
		// RefreshInterval lets the lister see new partitions in time.
		MetadataTTL: max(cfg.RefreshInterval/2, 10*time.Millisecond),
		ClientID:    "squall-" + cfg.Topology,
		SASL:        mech,
		TLS:         tc,
	}, nil
}

// authError returns err wrapped with ErrAuthentication and what was tried
// (mechanism, user, brokers; never the password) if it is a SASL or TLS
// failure, else nil.
func (c Config) authError(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case isSASLError(err):
		return fmt.Errorf("%w: SASL %s on brokers %v (check the mechanism, user and password): %w",
			ErrAuthentication, c.SASL, c.Brokers, err)
	case isTLSError(err):
		hint := "check TLS.CAFile and TLS.ServerName"
		var rec tls.RecordHeaderError
		if errors.As(err, &rec) {
			hint = "the broker did not answer in TLS: is this its SSL or SASL_SSL listener?"
		}
		return fmt.Errorf("%w: TLS handshake with brokers %v (%s): %w", ErrAuthentication, c.Brokers, hint, err)
	}
	return nil
}

// isSASLError reports whether err is the broker's refusal of the SASL
// mechanism, user or password.
func isSASLError(err error) bool {
	return errors.Is(err, kafkago.SASLAuthenticationFailed) || errors.Is(err, kafkago.UnsupportedSASLMechanism) ||
		errors.Is(err, kafkago.IllegalSASLState)
}

// isTLSError reports whether err is a failed TLS handshake: certificate
// verification, an alert from the broker, or a peer that does not speak
// TLS.
func isTLSError(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
		alert    tls.AlertError
	)
	return errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record) || errors.As(err, &alert)
}

// isAuthFailure reports whether err is a SASL or TLS failure, which no
// retry fixes.
func isAuthFailure(err error) bool { return isSASLError(err) || isTLSError(err) }

// protocolHint explains a connection the broker closed at once: most often
// a listener whose security protocol does not match TLS and SASL.
func (c Config) protocolHint(err error) string {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return ""
	}
	protocol := "PLAINTEXT"
	switch {
	case c.TLS != nil && c.SASL.Enabled():
		protocol = "SASL_SSL"
	case c.TLS != nil:
		protocol = "SSL"
	case c.SASL.Enabled():
		protocol = "SASL_PLAINTEXT"
	}
	return fmt.Sprintf(" (the broker closed the connection: is its listener's security protocol %s, as TLS and SASL say?)", protocol)
}
