package main

import (
	"context"
	"strings"
	"testing"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/internal/testenv"
)

// realServices gives a test of the real Kafka and Cassandra its own
// keyspace and topics (named after prefix and the test, dropped at its
// end), the options naming them and a Kafka client.
func realServices(ctx context.Context, t *testing.T, prefix string) (options, *kafkaIO) {
	t.Helper()
	brokers, hosts := testenv.KafkaBrokers(t), testenv.CassandraHosts(t)
	name := strings.ReplaceAll(testenv.UniqueName(t, prefix), "-", "_")
	t.Cleanup(func() { dropChaosData(t, brokers, hosts, name) })
	o := options{kafka: strings.Join(brokers, ","), cassandra: strings.Join(hosts, ","), keyspace: name, replication: 1,
		topic: name + "_events", dlq: name + "_dlq", partitions: 4}
	kio, err := newKafkaIO(brokers, kafkaSec{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kio.Close)
	if err := kio.ensureTopics(ctx, o.partitions, o.topic, o.dlq); err != nil {
		t.Fatal(err)
	}
	return o, kio
}

// generator returns the event generator g describes.
func generator(t *testing.T, g genFlags) *room.Generator {
	t.Helper()
	cfg, err := g.config()
	if err != nil {
		t.Fatal(err)
	}
	gen, err := room.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return gen
}
