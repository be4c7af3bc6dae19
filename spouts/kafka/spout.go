package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	retry "github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
)

// Spout reads Config.Topics for Trident streams. Opaque and Transactional
// return the stream sources; both share the spout's connections, its
// dead-letter writer and its offset mirror. Close it after the topologies
// using it have stopped.
type Spout struct {
	cfg        Config
	fields     trident.Fields
	transport  *kafkago.Transport
	client     *kafkago.Client
	lister     *lister
	dlq        *deadLetters // nil without a DeadLetterTopic
	letters    letterLedger // the letters known written, per source partition
	mirror     *mirror      // nil with the mirror off
	stats      stats
	backoff    backoff
	goroutines *goroutines // read-ahead fetches; the mirror has its own stop
	closed     atomic.Bool
	closeOnce  sync.Once
}

// New checks cfg, connects to the brokers and checks that every topic in
// cfg.Topics (and the dead-letter topic) exists, so that bad configuration
// fails here with a clear error rather than in the first batch. The error
// matches ErrInvalidConfig, ErrAuthentication (SASL or TLS failed: not
// worth retrying), ErrUnreachable or ErrUnknownTopic, or names the broker's
// refusal (for example, an authorization failure).
//
// New starts the offset mirror's goroutine; the emitters start read-ahead
// fetches. Close stops them all.
func New(ctx context.Context, cfg Config) (*Spout, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Spout{cfg: cfg, fields: cfg.Decoder.Fields(), goroutines: newGoroutines()}
	transport, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	s.transport = transport
	s.client = &kafkago.Client{Addr: kafkago.TCP(cfg.Brokers...), Transport: s.transport, Timeout: cfg.RequestTimeout}
	s.lister = &lister{s: s}
	s.backoff = newBackoff(cfg.Clock, 100*time.Millisecond, 5*time.Second)
	if err := s.check(ctx); err != nil {
		s.transport.CloseIdleConnections()
		return nil, err
	}
	if cfg.DeadLetterTopic != "" {
		s.dlq = newDeadLetters(ctx, s)
	}
	if cfg.MirrorInterval > 0 {
		s.mirror = startMirror(s)
	}
	return s, nil
}

// check asks for the metadata of every topic the spout uses.
func (s *Spout) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	topics := append([]string(nil), s.cfg.Topics...)
	if s.cfg.DeadLetterTopic != "" {
		topics = append(topics, s.cfg.DeadLetterTopic)
	}
	md, err := s.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: topics})
	if err != nil {
		if aerr := s.cfg.authError(err); aerr != nil {
			return aerr
		}
		return fmt.Errorf("%w: brokers %v%s: %w", ErrUnreachable, s.cfg.Brokers, s.cfg.protocolHint(err), err)
	}
	found := map[string]kafkago.Topic{}
	for _, t := range md.Topics {
		found[t.Name] = t
	}
	var errs []error
	for _, name := range topics {
		t, ok := found[name]
		switch {
		case !ok || errors.Is(t.Error, kafkago.UnknownTopicOrPartition):
			errs = append(errs, fmt.Errorf("%w: %q on brokers %v", ErrUnknownTopic, name, s.cfg.Brokers))
		case t.Error != nil:
			errs = append(errs, fmt.Errorf("kafka: topic %q: %w", name, t.Error))
		case len(t.Partitions) == 0:
			errs = append(errs, fmt.Errorf("%w: %q has no partitions", ErrUnknownTopic, name))
		}
	}
	return errors.Join(errs...)
}

// Fields returns the fields of the spout's tuples: the Decoder's.
func (s *Spout) Fields() trident.Fields { return append(trident.Fields(nil), s.fields...) }

// Opaque returns an opaque partitioned source over the spout's topics,
// the default choice: exactly-once with opaque state, and it moves on when
// records of a batch that never began its commit are deleted. Use
// Parallelism(n) on the result to split the partitions among n tasks.
func (s *Spout) Opaque() trident.Source {
	return trident.OpaqueSource[Meta](s.Fields(), s.newLister, s.newEmitter)
}

// Transactional returns a transactional partitioned source: every replay
// of a batch re-emits exactly the recorded offset range, and fails with a
// reported error matching spout.ErrUnavailable if the range can no longer
// be read.
func (s *Spout) Transactional() trident.Source {
	return trident.TransactionalSource[Meta](s.Fields(), s.newLister, s.newEmitter)
}

// newLister returns the spout's lister. It is shared by every worker
// start and by both flavours, and is not an io.Closer: Close releases
// what it uses.
func (s *Spout) newLister() spout.Lister { return s.lister }

// Partitions lists the spout's partitions as its sources do ("topic@3"),
// refreshed at most every RefreshInterval.
func (s *Spout) Partitions(ctx context.Context) ([]spout.Partition, error) {
	return s.lister.Partitions(ctx)
}

// Close stops the read-ahead fetches and the offset mirror (after a last
// commit), closes the
// dead-letter writer and drops the connections. Call it after the
// topologies reading from the spout have stopped; it is safe to call more
// than once.
func (s *Spout) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.goroutines.stop()
		if s.mirror != nil {
			s.mirror.stop()
		}
		if s.dlq != nil {
			err = s.dlq.close()
		}
		s.transport.CloseIdleConnections()
	})
	return err
}

// backoff spaces out requests after connection failures: each failure
// doubles the pause before the next request, from min to max; a success
// resets it.
type backoff struct {
	clock clock.Clock

	mu    sync.Mutex
	seq   retry.Sequence // in nanoseconds
	until time.Time
}

func newBackoff(c clock.Clock, min, max time.Duration) backoff {
	return backoff{clock: c, seq: retry.Sequence{Backoff: retry.Exponential(int64(min), int64(max))}}
}

func (b *backoff) fail() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := time.Duration(b.seq.Next())
	b.until = b.clock.Now().Add(d)
	return d
}

func (b *backoff) succeed() {
	b.mu.Lock()
	b.seq.Reset()
	b.mu.Unlock()
}

// wait sleeps until the pause after the last failure is over.
func (b *backoff) wait(ctx context.Context) error {
	b.mu.Lock()
	d := b.until.Sub(b.clock.Now())
	b.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := b.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// brokerError marks err, a failed request about tp, with its failure kind
// and, for connection trouble, drops the connections and cached metadata
// and pauses later requests (reconnect with backoff).
func (s *Spout) brokerError(tp topicPartition, op string, err error) error {
	marked, reconnect := classify(err)
	if reconnect {
		d := s.backoff.fail()
		s.stats.reconnects.Add(1)
		s.transport.CloseIdleConnections()
		s.cfg.Logger.Warn("kafka spout: request failed; reconnecting", "topic", tp.topic, "partition", tp.partition,
			"op", op, "backoff", d, "err", err)
	}
	return fmt.Errorf("kafka: topic %s partition %d: %s: %w", tp.topic, tp.partition, op, marked)
}
