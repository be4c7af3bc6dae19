package cassandra

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/gocql/gocql"
)

// Defaults of Config's zero values.
const (
	DefaultMaxInFlight    = 128
	DefaultTimeout        = 10 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	DefaultRetries        = 2
	DefaultKeysPageSize   = 1000
)

// Config configures Connect. Zero values take the documented defaults;
// Hosts and Keyspace are required.
type Config struct {
	// Hosts are the contact points, "host" or "host:port" (port 9042 when
	// absent). gocql discovers the other nodes from them.
	Hosts []string
	// Keyspace holds the tables of this session. It need not exist at
	// Connect: EnsureKeyspace creates it.
	Keyspace string
	// LocalDC, when set, routes requests to the replicas of this data
	// centre first (token-aware over DC-aware round-robin). Empty: token-
	// aware over plain round-robin, fine for one data centre.
	LocalDC string

	// Consistency of state reads and writes. Zero means LOCAL_QUORUM, the
	// level at which a read sees every acknowledged write when replication
	// is at least 1 in the local data centre (R + W > RF). gocql.Any has
	// the value zero and cannot be chosen (it is not valid for reads).
	Consistency gocql.Consistency
	// SerialConsistency of the lightweight transactions (fencing epochs,
	// the coordination store's compare-and-set). Zero means LOCAL_SERIAL.
	SerialConsistency gocql.SerialConsistency

	// Timeout bounds one request on the client (the server's own timeouts
	// are in cassandra.yaml). Zero means 10 s.
	Timeout time.Duration
	// ConnectTimeout bounds dialling and the connection handshake. Zero
	// means 10 s.
	ConnectTimeout time.Duration
	// Retries is how many times gocql retries an idempotent read or write
	// on another attempt before the call fails (and the batch is
	// replayed). Zero means 2; negative means no retries. Lightweight
	// transactions are never retried blindly.
	Retries int
	// ConnsPerHost is the number of connections to each node. Zero means
	// 2 (gocql's default).
	ConnsPerHost int
	// MaxInFlight bounds the requests this session has outstanding at
	// once, across all its maps. Zero means 128 (storm-cassandra's default
	// with the Java driver's defaults).
	MaxInFlight int
	// KeysPageSize is how many rows one request of a map's Keys (a paged
	// scan of its whole table) reads. Zero means 1000.
	KeysPageSize int

	// Username and Password, when Username is set, authenticate with
	// PasswordAuthenticator.
	Username string
	Password string
	// TLS, when set, encrypts connections with this configuration (its
	// ServerName and RootCAs decide verification).
	TLS *tls.Config

	// Logger receives gocql's messages (at debug level) and this
	// package's warnings. Nil discards them.
	Logger *slog.Logger

	// QueryObserver and BatchObserver, when set, are told of every
	// statement and every batch the session sends, each attempt
	// (retries included); gocql calls them from the requests'
	// goroutines, so they must be safe for concurrent use. For counting
	// statements; nil observes nothing.
	QueryObserver gocql.QueryObserver
	BatchObserver gocql.BatchObserver
}

// identifier is an unquoted CQL name: a letter, then letters, digits or
// underscores, at most 48 characters (Cassandra's limit for keyspaces and
// tables). Names are used unquoted, so they are case-insensitive.
var identifier = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,47}$`)

// ErrConfig is matched by the errors of an invalid Config or TableSpec.
var ErrConfig = errors.New("cassandra: invalid configuration")

// Validate reports whether c is usable, naming every problem.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if len(c.Hosts) == 0 {
		bad("no Hosts")
	}
	for _, h := range c.Hosts {
		if h == "" {
			bad("an empty host in Hosts")
		}
	}
	if !identifier.MatchString(c.Keyspace) {
		bad("Keyspace %q is not a CQL identifier (a letter, then letters, digits or _, at most 48)", c.Keyspace)
	}
	switch c.Consistency {
	case gocql.Any:
	case gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All, gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne:
	default:
		bad("Consistency %v is not a read/write consistency level", c.Consistency)
	}
	switch c.SerialConsistency {
	case 0, gocql.Serial, gocql.LocalSerial:
	default:
		bad("SerialConsistency %v: want SERIAL or LOCAL_SERIAL", c.SerialConsistency)
	}
	if c.Timeout < 0 || c.ConnectTimeout < 0 {
		bad("negative Timeout or ConnectTimeout")
	}
	if c.MaxInFlight < 0 || c.ConnsPerHost < 0 {
		bad("negative MaxInFlight %d or ConnsPerHost %d", c.MaxInFlight, c.ConnsPerHost)
	}
	if c.KeysPageSize < 0 {
		bad("negative KeysPageSize %d", c.KeysPageSize)
	}
	if c.Username == "" && c.Password != "" {
		bad("Password without Username")
	}
	return errors.Join(errs...)
}

func (c Config) consistency() gocql.Consistency {
	if c.Consistency == gocql.Any {
		return gocql.LocalQuorum
	}
	return c.Consistency
}

func (c Config) serial() gocql.SerialConsistency {
	if c.SerialConsistency == 0 {
		return gocql.LocalSerial
	}
	return c.SerialConsistency
}

func (c Config) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c Config) connectTimeout() time.Duration {
	if c.ConnectTimeout == 0 {
		return DefaultConnectTimeout
	}
	return c.ConnectTimeout
}

func (c Config) retries() int {
	switch {
	case c.Retries == 0:
		return DefaultRetries
	case c.Retries < 0:
		return 0
	}
	return c.Retries
}

func (c Config) maxInFlight() int {
	if c.MaxInFlight == 0 {
		return DefaultMaxInFlight
	}
	return c.MaxInFlight
}

func (c Config) keysPageSize() int {
	if c.KeysPageSize == 0 {
		return DefaultKeysPageSize
	}
	return c.KeysPageSize
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// cluster builds gocql's configuration. No keyspace is set on it: every
// statement names its table as keyspace.table, so a session can be opened
// before EnsureKeyspace creates the keyspace.
func (c Config) cluster() *gocql.ClusterConfig {
	cl := gocql.NewCluster(c.Hosts...)
	cl.Consistency = c.consistency()
	cl.SerialConsistency = c.serial()
	cl.Timeout = c.timeout()
	cl.ConnectTimeout = c.connectTimeout()
	cl.ProtoVersion = 4
	if c.ConnsPerHost > 0 {
		cl.NumConns = c.ConnsPerHost
	}
	var inner gocql.HostSelectionPolicy = gocql.RoundRobinHostPolicy()
	if c.LocalDC != "" {
		inner = gocql.DCAwareRoundRobinPolicy(c.LocalDC)
	}
	cl.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(inner)
	// Retries are attached per statement to idempotent ones only (gocql
	// v1.7.0 retries whatever has a policy, LWTs included).
	cl.RetryPolicy = nil
	if c.Username != "" {
		cl.Authenticator = gocql.PasswordAuthenticator{Username: c.Username, Password: c.Password}
	}
	if c.TLS != nil {
		cl.SslOpts = &gocql.SslOptions{Config: c.TLS.Clone(), EnableHostVerification: !c.TLS.InsecureSkipVerify}
	}
	cl.Logger = gocqlLogger{c.logger()}
	cl.QueryObserver = c.QueryObserver
	cl.BatchObserver = c.BatchObserver
	return cl
}
