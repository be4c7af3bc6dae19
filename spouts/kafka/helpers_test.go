package kafka_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/spouts/kafka/kafkatest"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// broker is a Kafka cluster a test uses: the real one or a kafkatest one.
type broker struct {
	name    string
	addrs   []string
	client  *kafkago.Client
	cluster *kafkatest.Cluster // nil for the real Kafka
}

// brokers runs f against the in-process broker and the real Kafka.
func brokers(t *testing.T, f func(t *testing.T, b *broker)) {
	t.Run("kafkatest", func(t *testing.T) { f(t, fakeBroker(t, 1)) })
	t.Run("real", func(t *testing.T) { f(t, realBroker(t)) })
}

func fakeBroker(t testing.TB, nodes int) *broker {
	c, err := kafkatest.Start(kafkatest.Config{Brokers: nodes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &broker{name: "kafkatest", addrs: c.Addrs(), client: adminClient(t, c.Addrs()), cluster: c}
}

func realBroker(t testing.TB) *broker {
	addrs := testenv.KafkaBrokers(t)
	return &broker{name: "real", addrs: addrs, client: adminClient(t, addrs)}
}

// adminClient is a client whose metadata is at most 200ms old.
func adminClient(t testing.TB, brokers []string) *kafkago.Client {
	transport := &kafkago.Transport{MetadataTTL: 200 * time.Millisecond}
	t.Cleanup(transport.CloseIdleConnections)
	return &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: transport, Timeout: 10 * time.Second}
}

// topic creates a unique topic with the given partitions and topic
// configs, deleted when the test ends, and waits for its leaders.
func (b *broker) topic(t testing.TB, partitions int, configs ...kafkago.ConfigEntry) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := testenv.UniqueName(t, "sq")
	resp, err := b.client.CreateTopics(ctx, &kafkago.CreateTopicsRequest{
		Topics: []kafkago.TopicConfig{{Topic: name, NumPartitions: partitions, ReplicationFactor: 1, ConfigEntries: configs}},
	})
	if err == nil {
		err = resp.Errors[name]
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := b.client.DeleteTopics(ctx, &kafkago.DeleteTopicsRequest{Topics: []string{name}})
		if err == nil {
			err = resp.Errors[name]
		}
		if err != nil && b.cluster == nil {
			t.Logf("delete topic %s: %v", name, err)
		}
	})
	b.waitLeaders(ctx, t, name, partitions)
	return name
}

func (b *broker) waitLeaders(ctx context.Context, t testing.TB, topic string, partitions int) {
	t.Helper()
	waitForLeaders(ctx, t, b.client, topic, partitions)
}

// produce writes msgs to partition of topic and waits for the acks.
func (b *broker) produce(t testing.TB, topic string, partition int, msgs ...kafkago.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w := &kafkago.Writer{
		Addr:         kafkago.TCP(b.addrs...),
		Topic:        topic,
		Balancer:     kafkago.BalancerFunc(func(kafkago.Message, ...int) int { return partition }),
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: 2 * time.Millisecond,
		BatchSize:    10_000,
		BatchBytes:   900_000,
		Transport:    b.client.Transport,
	}
	defer w.Close()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce %d records to %s@%d: %v", len(msgs), topic, partition, err)
	}
}

// values produces records with values v<first>..v<first+n-1> and keys
// k<i>.
func (b *broker) values(t testing.TB, topic string, partition, first, n int) {
	t.Helper()
	msgs := make([]kafkago.Message, n)
	for i := range msgs {
		msgs[i] = kafkago.Message{Key: fmt.Appendf(nil, "k%d", first+i), Value: fmt.Appendf(nil, "v%d", first+i)}
	}
	b.produce(t, topic, partition, msgs...)
}

// spoutConfig is a Config for topics on b with quiet logs and no mirror.
func (b *broker) spoutConfig(t testing.TB, topics ...string) kafka.Config {
	return kafka.Config{
		Brokers: b.addrs, Topics: topics, Topology: "test-" + topics[0],
		MirrorInterval: -1, Logger: testLogger(t),
	}
}

func newSpout(t testing.TB, cfg kafka.Config) *kafka.Spout {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sp, err := kafka.New(ctx, cfg)
	if err != nil {
		t.Fatalf("kafka.New: %v", err)
	}
	t.Cleanup(func() {
		if err := sp.Close(); err != nil {
			t.Errorf("close spout: %v", err)
		}
	})
	return sp
}

func testLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// part names partition i of topic as the spout does.
func part(topic string, i int) spout.Partition {
	return spout.Partition(fmt.Sprintf("%s@%d", topic, i))
}

// emit has e emit a new batch and returns its metadata and the values of
// the tuples (the raw value field).
func emit(t testing.TB, e spout.Emitter[kafka.Meta], txid txn.TxID, p spout.Partition, prev *kafka.Meta) (kafka.Meta, []string) {
	t.Helper()
	var c spouttest.Collector
	m, err := e.Emit(context.Background(), txn.Attempt{TxID: txid}, p, prev, &c)
	if err != nil {
		t.Fatalf("emit txid %d of %s: %v", txid, p, err)
	}
	if errs := c.Errors(); len(errs) > 0 {
		t.Logf("emit txid %d of %s reported %v", txid, p, errs)
	}
	return m, rawValues(t, c.Tuples())
}

func rawValues(t testing.TB, tuples [][]any) []string {
	t.Helper()
	out := make([]string, len(tuples))
	for i, tu := range tuples {
		if len(tu) != 7 {
			t.Fatalf("tuple %v has %d values, want the 7 raw fields", tu, len(tu))
		}
		out[i] = string(tu[4].([]byte))
	}
	return out
}

// seq returns v<from>..v<to-1>.
func seq(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("v%d", i))
	}
	return out
}

func wantValues(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %d values %v, want %d %v", what, len(got), short(got), len(want), short(want))
	}
}

func short(s []string) []string {
	if len(s) > 8 {
		return append(slices.Clone(s[:4]), append([]string{"..."}, s[len(s)-3:]...)...)
	}
	return s
}
