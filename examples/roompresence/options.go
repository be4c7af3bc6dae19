package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/squallstream/squall/state/cassandra"
)

// Environment variables that name real services, as in the project's
// tests (see docs/testing.md).
const (
	kafkaVar     = "SQUALL_KAFKA_BROKERS"
	cassandraVar = "SQUALL_CASSANDRA_HOSTS"
)

// options are the flags every command shares: where the events and the
// results live.
type options struct {
	kafka       string // comma-separated brokers; empty: the embedded broker
	cassandra   string // comma-separated hosts; empty: the embedded store
	keyspace    string
	replication int
	data        string // directory of the embedded store
	topic, dlq  string
	partitions  int
	sec         security // credentials and TLS of the real services
	version     int      // of the result tables (Cassandra); 0: the one readers use
}

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.kafka, "kafka", os.Getenv(kafkaVar), "Kafka brokers, host:port[,...] (default $"+kafkaVar+"; empty: the embedded broker)")
	fs.StringVar(&o.cassandra, "cassandra", os.Getenv(cassandraVar), "Cassandra hosts, host:port[,...] (default $"+cassandraVar+"; empty: the embedded store)")
	fs.StringVar(&o.keyspace, "keyspace", "roompresence", "Cassandra keyspace")
	fs.IntVar(&o.replication, "replication", 1, "replication factor of a keyspace created by the example (SimpleStrategy)")
	fs.StringVar(&o.data, "data", "roompresence-data", "directory of the embedded store (when no Cassandra is given)")
	fs.StringVar(&o.topic, "topic", "room-events", "topic of the events")
	fs.StringVar(&o.dlq, "dlq", "room-events-dlq", "dead-letter topic of malformed records")
	fs.IntVar(&o.partitions, "partitions", 8, "partitions of topics the example creates")
	fs.IntVar(&o.version, "version", 0, "version of the result tables in Cassandra (0: the version readers use; see rebuild)")
	o.sec.register(fs)
}

func (o *options) brokers() []string   { return splitList(o.kafka) }
func (o *options) cassHosts() []string { return splitList(o.cassandra) }

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (o *options) validate() error {
	var errs []error
	if o.partitions < 1 {
		errs = append(errs, fmt.Errorf("--partitions %d: need at least 1", o.partitions))
	}
	if o.replication < 1 {
		errs = append(errs, fmt.Errorf("--replication %d: need at least 1", o.replication))
	}
	if o.topic == "" || o.dlq == "" || o.topic == o.dlq {
		errs = append(errs, fmt.Errorf("--topic %q and --dlq %q must be two different names", o.topic, o.dlq))
	}
	if err := o.sec.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// parse parses a command's flags and checks the shared options; needKafka
// says the command runs only against a real Kafka.
func (o *options) parse(fs *flag.FlagSet, args []string, needKafka bool) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	if needKafka {
		return o.requireKafka(fs.Name())
	}
	return nil
}

// requireKafka is for the commands that run in their own process and so
// cannot share the embedded broker, which lives only as long as one
// process.
func (o *options) requireKafka(cmd string) error {
	if len(o.brokers()) == 0 {
		return fmt.Errorf("%s needs a real Kafka: give --kafka or set %s (the embedded broker lives in one process; run the example without a command to use it)", cmd, kafkaVar)
	}
	return nil
}

// openStore opens Cassandra when hosts are given, else the embedded store
// in the data directory.
func (o *options) openStore(ctx context.Context) (Store, error) {
	if hosts := o.cassHosts(); len(hosts) > 0 {
		cfg, err := o.cassandraConfig()
		if err != nil {
			return nil, err
		}
		return openCassandra(ctx, cfg, o.replication, o.version)
	}
	if o.version > 1 {
		return nil, fmt.Errorf("--version %d: versions of the results need Cassandra (--cassandra)", o.version)
	}
	return openEmbedded(ctx, o.data)
}

// cassandraConfig is the Cassandra connection the options describe.
func (o *options) cassandraConfig() (cassandra.Config, error) {
	tc, err := o.sec.cassandraTLS()
	if err != nil {
		return cassandra.Config{}, err
	}
	return cassandra.Config{Hosts: o.cassHosts(), Keyspace: o.keyspace,
		Username: o.sec.cassUser, Password: o.sec.cassPassword, TLS: tc}, nil
}

// describeStore names where results are kept, for messages.
func (o *options) describeStore() string {
	if hosts := o.cassHosts(); len(hosts) > 0 {
		return fmt.Sprintf("Cassandra %s, keyspace %s", strings.Join(hosts, ","), o.keyspace)
	}
	return "the embedded store in " + o.data
}
