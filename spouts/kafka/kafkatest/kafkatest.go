// Package kafkatest runs an in-process broker that speaks the Kafka protocol,
// for fast tests and for demos that must run without Java. It listens on
// 127.0.0.1 only and keeps its log in memory.
//
// It is built on github.com/twmb/franz-go/pkg/kfake: produce, fetch, list
// offsets, metadata, topic admin, consumer groups and offset commits with
// metadata all work through github.com/segmentio/kafka-go. It is a fake, not
// Kafka: claims about real broker behaviour belong in tests against the real
// Kafka of scripts/services.sh (see internal/testenv and docs/testing.md).
//
//	c, err := kafkatest.Start(kafkatest.Config{Topics: []string{"events"}, Partitions: 4})
//	if err != nil { ... }
//	defer c.Close()
//	w := &kafka.Writer{Addr: kafka.TCP(c.Addrs()...), Topic: "events", RequiredAcks: kafka.RequireAll}
//
// Close stops the broker: it closes the listeners and every client
// connection, and the broker's goroutines exit with them.
package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Config describes the broker to start. The zero value is one broker with no
// topics, where new topics get one partition.
type Config struct {
	// Brokers is the number of brokers in the cluster; zero means 1.
	// Ignored when Ports is set.
	Brokers int

	// Ports are the 127.0.0.1 ports to listen on, one broker each; empty
	// means one free port per broker, chosen by the kernel.
	Ports []int

	// Topics are created at start, each with Partitions partitions.
	Topics []string

	// Partitions is the partition count of Topics and of topics created
	// without an explicit count (auto-created, or CreateTopics with -1);
	// zero means 1.
	Partitions int32

	// AutoCreateTopics lets metadata requests that ask for it create unknown
	// topics, as a default Kafka broker does.
	AutoCreateTopics bool

	// Logger receives the broker's log: mostly warnings about requests it
	// refused, and errors; nil discards it.
	Logger *slog.Logger
}

// Validate reports a Config that Start would reject.
func (c Config) Validate() error {
	if c.Brokers < 0 {
		return fmt.Errorf("kafkatest: Brokers = %d, must not be negative", c.Brokers)
	}
	if c.Partitions < 0 {
		return fmt.Errorf("kafkatest: Partitions = %d, must not be negative", c.Partitions)
	}
	for _, p := range c.Ports {
		if p <= 0 || p > 65535 {
			return fmt.Errorf("kafkatest: port %d out of range", p)
		}
	}
	for _, t := range c.Topics {
		if t == "" {
			return errors.New("kafkatest: empty topic name")
		}
	}
	return nil
}

// Cluster is a running in-process broker cluster.
type Cluster struct {
	fake  *kfake.Cluster
	addrs []string

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
	once   sync.Once
}

// Start starts a cluster as described by cfg and returns once it accepts
// connections.
func Start(cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	brokers, partitions := cfg.Brokers, cfg.Partitions
	if brokers == 0 {
		brokers = 1
	}
	if partitions == 0 {
		partitions = 1
	}
	c := &Cluster{conns: make(map[*trackedConn]struct{})}
	opts := []kfake.Opt{
		kfake.NumBrokers(brokers),
		kfake.DefaultNumPartitions(int(partitions)),
		kfake.ListenFn(c.listen),
	}
	if len(cfg.Ports) > 0 {
		opts = append(opts, kfake.Ports(cfg.Ports...))
	}
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(partitions, cfg.Topics...))
	}
	if cfg.AutoCreateTopics {
		opts = append(opts, kfake.AllowAutoTopicCreation())
	}
	if cfg.Logger != nil {
		opts = append(opts, kfake.WithLogger(slogLogger{cfg.Logger}))
	}
	fake, err := kfake.NewCluster(opts...)
	if err != nil {
		c.closeConns()
		return nil, fmt.Errorf("kafkatest: start: %w", err)
	}
	c.fake = fake
	c.addrs = fake.ListenAddrs()
	return c, nil
}

// Addrs returns the brokers' host:port addresses, for kafka.TCP(...) or a
// ReaderConfig's Brokers.
func (c *Cluster) Addrs() []string {
	return append([]string(nil), c.addrs...)
}

// Close stops the cluster: listeners, client connections and the broker's
// goroutines. It is safe to call more than once.
func (c *Cluster) Close() error {
	c.once.Do(func() {
		c.fake.Close()
		c.closeConns()
	})
	return nil
}

func (c *Cluster) closeConns() {
	c.mu.Lock()
	c.closed = true
	conns := make([]*trackedConn, 0, len(c.conns))
	for tc := range c.conns {
		conns = append(conns, tc)
	}
	c.mu.Unlock()
	for _, tc := range conns {
		tc.Close()
	}
}

// listen is kfake's ListenFn: every accepted connection is tracked, so that
// Close can close the ones the broker has not closed yet.
func (c *Cluster) listen(network, addr string) (net.Listener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	return &trackedListener{Listener: ln, c: c}, nil
}

type trackedListener struct {
	net.Listener
	c *Cluster
}

func (l *trackedListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: conn, c: l.c}
	l.c.mu.Lock()
	closed := l.c.closed
	if !closed {
		l.c.conns[tc] = struct{}{}
	}
	l.c.mu.Unlock()
	if closed {
		conn.Close()
		return nil, net.ErrClosed
	}
	return tc, nil
}

type trackedConn struct {
	net.Conn
	c    *Cluster
	once sync.Once
	err  error
}

func (tc *trackedConn) Close() error {
	tc.once.Do(func() {
		tc.err = tc.Conn.Close()
		tc.c.mu.Lock()
		delete(tc.c.conns, tc)
		tc.c.mu.Unlock()
	})
	return tc.err
}

// slogLogger adapts a *slog.Logger to kfake's logger.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	lvl := slog.LevelDebug
	switch level {
	case kfake.LogLevelError:
		lvl = slog.LevelError
	case kfake.LogLevelWarn:
		lvl = slog.LevelWarn
	case kfake.LogLevelInfo:
		lvl = slog.LevelInfo
	}
	s.l.Log(context.Background(), lvl, fmt.Sprintf(format, args...), "component", "kafkatest")
}

// MovePartition makes broker node (0 to Brokers-1) the leader of a topic's
// partition, as a reassignment or leader election would: clients that
// still send requests for it to the old leader get NOT_LEADER errors until
// they refresh their metadata.
func (c *Cluster) MovePartition(topic string, partition, node int32) error {
	if err := c.fake.MoveTopicPartition(topic, partition, node); err != nil {
		return fmt.Errorf("kafkatest: move %s partition %d to node %d: %w", topic, partition, node, err)
	}
	return nil
}

// Leader returns the node that leads a topic's partition, or -1 if there
// is none.
func (c *Cluster) Leader(topic string, partition int32) int32 {
	return c.fake.LeaderFor(topic, partition)
}
