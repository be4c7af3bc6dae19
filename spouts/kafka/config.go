package kafka

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

// Defaults of the Config fields whose zero value means "default".
const (
	DefaultMaxRecordsPerPartition = 10_000
	DefaultMaxBytesPerPartition   = 1 << 20
	DefaultRefreshInterval        = 2 * time.Second
	DefaultMirrorInterval         = time.Second
	DefaultDialTimeout            = 5 * time.Second
	DefaultRequestTimeout         = 10 * time.Second
)

// Config configures a Spout. The zero value of every optional field is a
// documented default; Validate reports what New would reject.
type Config struct {
	// Brokers are the bootstrap addresses (host:port). Required.
	Brokers []string

	// Topics are the topics read, all of their partitions. Required; each
	// must exist when New is called.
	Topics []string

	// Topology names the reading topology. It is the default TopologyID
	// and the name of the consumer group that mirrors progress
	// (MirrorGroup). Required.
	Topology string

	// TopologyID identifies this deployment of the topology; it is stored
	// in every batch's metadata. Empty means Topology. A restart with the
	// same id resumes every partition from the coordination store; a new
	// id is a redeploy: partitions whose stored metadata carries another id
	// start again at Start (Storm's storm-id check with the EARLIEST,
	// LATEST and TIMESTAMP strategies). See docs/kafka.md.
	TopologyID string

	// Start is where a partition starts when it has no stored position
	// under this TopologyID: Earliest (the zero value), Latest or
	// AtTime(t). A partition added to a topic while the spout runs starts
	// at its earliest offset whatever Start says: all its records are new.
	Start StartPosition

	// OnOutOfRange says what a new batch does when its start offset is no
	// longer in the log (retention deleted records before they were read):
	// FailOutOfRange (the zero value) fails the batch with a reported
	// *OutOfRangeError; SkipToEarliest moves on from the earliest offset,
	// reports the loss and counts it in Stats. A replay of a stored batch
	// never skips.
	OnOutOfRange OutOfRangePolicy

	// Decoder turns records into tuples. Nil means RawFields: topic,
	// partition, offset, key, value, headers and timestamp.
	Decoder Decoder

	// DeadLetterTopic receives records the Decoder rejects, with the error
	// and their coordinates in headers. Required when Decoder is set; it
	// must exist when New is called.
	DeadLetterTopic string

	// MaxRecordsPerPartition bounds the records of one partition in one
	// batch. Zero means DefaultMaxRecordsPerPartition.
	MaxRecordsPerPartition int

	// MaxBytesPerPartition bounds the key, value and header bytes of one
	// partition in one batch; a batch always holds at least one record if
	// one is there, whatever its size. Zero means DefaultMaxBytesPerPartition.
	MaxBytesPerPartition int

	// RefreshInterval is how often the partitions of Topics are listed
	// again, so that partitions added while running are picked up. Zero
	// means DefaultRefreshInterval (Storm's partitionRefreshPeriodMs).
	RefreshInterval time.Duration

	// MirrorGroup is the consumer group whose committed offsets mirror the
	// spout's progress for lag tools. Empty means Topology.
	MirrorGroup string

	// MirrorInterval is the least time between two commits of progress
	// to MirrorGroup. The mirror commits when a txid commits in the
	// topology; commits within an interval of the last write are written
	// together when it ends. Zero means DefaultMirrorInterval; a negative
	// value turns the mirror off.
	MirrorInterval time.Duration

	// DialTimeout bounds connecting to a broker. Zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration

	// RequestTimeout bounds one request to a broker. Zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration

	// SASL authenticates every connection with PLAIN, SCRAM-SHA-256 or
	// SCRAM-SHA-512. The zero value turns SASL off. See docs/kafka.md
	// ("Security").
	SASL SASLConfig

	// TLS, when set, encrypts every connection (and verifies the brokers'
	// certificates). Nil means plaintext.
	TLS *TLSConfig

	// Logger receives warnings (decode failures, skipped offsets,
	// reconnects). Nil means slog.Default().
	Logger *slog.Logger

	// Clock is the spout's clock: the lister's RefreshInterval, the
	// reconnect backoff and the mirror's MirrorInterval. Nil means the
	// system clock. Tests with virtual time pass the topology's
	// (topology.Config.Clock) here too.
	Clock clock.Clock

	// MaxBatchRecordsPerTask bounds the records of one task's batch over
	// all the partitions it owns, and MaxBatchBytesPerTask their key,
	// value and header bytes, so that a task's batch stays bounded however
	// many partitions it reads. Each partition gets a fair share of what
	// is left (see docs/kafka.md); the per-partition caps still apply.
	// Zero means no cap per task; negative values are invalid.
	MaxBatchRecordsPerTask int
	MaxBatchBytesPerTask   int
}

// ErrInvalidConfig is matched by the errors of New and Validate for a
// configuration the spout cannot run with.
var ErrInvalidConfig = errors.New("kafka: invalid config")

// Validate reports a configuration New would reject, without contacting
// the brokers. The error matches ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if len(c.Brokers) == 0 {
		bad("no Brokers")
	}
	for _, b := range c.Brokers {
		if strings.TrimSpace(b) == "" {
			bad("empty broker address")
		}
	}
	if len(c.Topics) == 0 {
		bad("no Topics")
	}
	seen := map[string]bool{}
	for _, t := range c.Topics {
		if err := validTopic(t); err != nil {
			bad("Topics: %v", err)
		}
		if seen[t] {
			bad("topic %q listed twice", t)
		}
		seen[t] = true
	}
	if c.Topology == "" {
		bad("no Topology")
	}
	if c.Decoder != nil && c.DeadLetterTopic == "" {
		bad("a Decoder needs a DeadLetterTopic for the records it rejects")
	}
	if c.DeadLetterTopic != "" {
		if err := validTopic(c.DeadLetterTopic); err != nil {
			bad("DeadLetterTopic: %v", err)
		}
		if seen[c.DeadLetterTopic] {
			bad("DeadLetterTopic %q is also read", c.DeadLetterTopic)
		}
	}
	if c.Decoder != nil && len(c.Decoder.Fields()) == 0 {
		bad("the Decoder declares no fields")
	}
	if err := c.Start.validate(); err != nil {
		bad("Start: %v", err)
	}
	if c.OnOutOfRange > SkipToEarliest {
		bad("unknown OnOutOfRange %d", c.OnOutOfRange)
	}
	if c.MaxRecordsPerPartition < 0 || c.MaxBytesPerPartition < 0 {
		bad("MaxRecordsPerPartition and MaxBytesPerPartition must not be negative")
	}
	if c.MaxBatchRecordsPerTask < 0 || c.MaxBatchBytesPerTask < 0 {
		bad("MaxBatchRecordsPerTask and MaxBatchBytesPerTask must not be negative (zero means no cap)")
	}
	if c.RefreshInterval < 0 || c.DialTimeout < 0 || c.RequestTimeout < 0 {
		bad("RefreshInterval, DialTimeout and RequestTimeout must not be negative")
	}
	for _, err := range c.SASL.validate() {
		bad("%v", err)
	}
	if _, err := c.TLS.Build(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validTopic checks a topic name as Kafka does: 1 to 249 characters of
// [a-zA-Z0-9._-], not "." or "..".
func validTopic(t string) error {
	if t == "" || t == "." || t == ".." || len(t) > 249 {
		return fmt.Errorf("invalid topic name %q", t)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("invalid topic name %q: character %q", t, r)
		}
	}
	return nil
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.TopologyID == "" {
		c.TopologyID = c.Topology
	}
	if c.MirrorGroup == "" {
		c.MirrorGroup = c.Topology
	}
	if c.MaxRecordsPerPartition == 0 {
		c.MaxRecordsPerPartition = DefaultMaxRecordsPerPartition
	}
	if c.MaxBytesPerPartition == 0 {
		c.MaxBytesPerPartition = DefaultMaxBytesPerPartition
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = DefaultRefreshInterval
	}
	if c.MirrorInterval == 0 {
		c.MirrorInterval = DefaultMirrorInterval
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Clock = clock.Or(c.Clock)
	if c.Decoder == nil {
		c.Decoder = RawFields{}
	}
	return c
}

// StartPosition is where a partition without a stored position starts.
type StartPosition struct {
	kind startKind
	at   time.Time
}

type startKind uint8

const (
	startEarliest startKind = iota
	startLatest
	startTime
)

var (
	// Earliest starts at the oldest record still in the log.
	Earliest = StartPosition{kind: startEarliest}
	// Latest starts after the newest record: only records produced from
	// then on are read.
	Latest = StartPosition{kind: startLatest}
)

// AtTime starts at the first record whose timestamp is at or after t, or
// at the end of the log if there is none.
func AtTime(t time.Time) StartPosition { return StartPosition{kind: startTime, at: t} }

// String describes the position.
func (s StartPosition) String() string {
	switch s.kind {
	case startEarliest:
		return "earliest"
	case startLatest:
		return "latest"
	case startTime:
		return "at " + s.at.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("start(%d)", s.kind)
}

func (s StartPosition) validate() error {
	if s.kind > startTime {
		return fmt.Errorf("unknown start position %d", s.kind)
	}
	if s.kind == startTime && s.at.IsZero() {
		return errors.New("AtTime with the zero time")
	}
	return nil
}

// OutOfRangePolicy says what a new batch does when its start offset is no
// longer in the log.
type OutOfRangePolicy uint8

const (
	// FailOutOfRange fails the batch with a reported *OutOfRangeError;
	// the stream stops making progress until an operator acts (for
	// example, redeploys with SkipToEarliest).
	FailOutOfRange OutOfRangePolicy = iota
	// SkipToEarliest moves the batch's start to the earliest offset still
	// in the log, reports the records lost and counts them in Stats.
	SkipToEarliest
)

// String names the policy.
func (p OutOfRangePolicy) String() string {
	switch p {
	case FailOutOfRange:
		return "fail"
	case SkipToEarliest:
		return "skip to earliest"
	}
	return fmt.Sprintf("policy(%d)", uint8(p))
}
