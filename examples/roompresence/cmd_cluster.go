package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/squallstream/squall"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// clusterEnvPrefix prefixes the environment variables that configure the
// topology in a cluster's workers: ROOMPRESENCE_<FLAG> sets --<flag>
// (upper case, dashes as underscores), e.g. ROOMPRESENCE_KEYSPACE.
const clusterEnvPrefix = "ROOMPRESENCE_"

// clusterSetupTimeout bounds what Build does before the topology runs:
// connecting to Cassandra and Kafka, creating the keyspace and topics.
const clusterSetupTimeout = 2 * time.Minute

// clusterTopology is the room-presence topology as a cluster program
// registers it. Supervisors start workers as "<program> worker ..." with
// their own environment, so Build reads its settings from the
// environment: the variables of the run command (SQUALL_KAFKA_BROKERS,
// SQUALL_CASSANDRA_HOSTS, the credential and TLS variables) and
// ROOMPRESENCE_<FLAG> for the flags listed by clusterFlags.
func clusterTopology(getenv func(string) string) squall.Topology {
	return squall.Topology{Name: "roompresence", Build: func(env squall.Env) (*trident.Topology, trident.Config, error) {
		return buildCluster(env, getenv)
	}}
}

// clusterSettings are the worker's settings: the run command's, read from
// the environment.
type clusterSettings struct {
	o            options
	faults       faultFlags
	faultWrite   float64
	tasks        int
	batchRecords int
	batchEvery   time.Duration
}

// parseClusterSettings reads the settings from getenv: the flags' own
// defaults first (the service variables), then ROOMPRESENCE_<FLAG>.
func parseClusterSettings(getenv func(string) string) (*clusterSettings, error) {
	return parseClusterSettingsFor(getenv, false)
}

// parseClusterSettingsFor is parseClusterSettings; when planning (a
// submit, on the client: see squall.Env.Planning) the services need not
// be set, as nothing connects to them.
func parseClusterSettingsFor(getenv func(string) string, planning bool) (*clusterSettings, error) {
	var s clusterSettings
	fs := flag.NewFlagSet("roompresence worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s.o.register(fs)
	s.faults.register(fs)
	fs.Float64Var(&s.faultWrite, "fault-write", 0, "probability, per write of the timelines, of a retryable failure after the write landed")
	fs.IntVar(&s.tasks, "tasks", 2, "parallelism of the spout, presence and timeline steps")
	fs.IntVar(&s.batchRecords, "batch-records", 2000, "most records of one partition in a batch")
	fs.DurationVar(&s.batchEvery, "batch-interval", 0, "least time between two batches (0: trident's default)")
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		name := clusterEnvPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("$%s: %w", name, err))
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := s.o.validate(); err != nil {
		return nil, err
	}
	if s.tasks < 1 || s.batchRecords < 1 || s.batchEvery < 0 {
		return nil, fmt.Errorf("%sTASKS and %sBATCH_RECORDS must be positive, %sBATCH_INTERVAL not negative",
			clusterEnvPrefix, clusterEnvPrefix, clusterEnvPrefix)
	}
	if planning {
		return &s, nil
	}
	if err := s.o.requireKafka("the cluster topology"); err != nil {
		return nil, err
	}
	if len(s.o.cassHosts()) == 0 {
		// The embedded store is files of one machine: the workers that may
		// run the topology (a restart elsewhere) must share the results.
		return nil, fmt.Errorf("the cluster topology needs Cassandra: set %s (or %sCASSANDRA) in the supervisors' environment", cassandraVar, clusterEnvPrefix)
	}
	return &s, nil
}

// buildCluster builds the topology in a worker. Its coordination store is
// the cluster's default, the cluster's etcd: Config.Store stays nil. The
// results go to Cassandra (the presence table and room_timelines, as with
// the run command). The worker closes the Cassandra session and the spout
// (which flushes its consumer-group mirror) when it stops. At a submit
// (env.Planning) it opens nothing: see planCluster.
func buildCluster(env squall.Env, getenv func(string) string) (*trident.Topology, trident.Config, error) {
	if env.Planning {
		return planCluster(env, getenv)
	}
	s, err := parseClusterSettings(getenv)
	if err != nil {
		return nil, trident.Config{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterSetupTimeout)
	defer cancel()
	st, err := s.o.openStore(ctx)
	if err != nil {
		return nil, trident.Config{}, err
	}
	kio, err := newKafkaIO(s.o.brokers(), s.o.sec.kafka())
	if err != nil {
		st.Close()
		return nil, trident.Config{}, err
	}
	err = kio.ensureTopics(ctx, s.o.partitions, s.o.topic, s.o.dlq)
	kio.Close()
	if err != nil {
		st.Close()
		return nil, trident.Config{}, err
	}
	rc := runConfig{brokers: s.o.brokers(), kafkaSec: s.o.sec.kafka(), store: st, topic: s.o.topic, dlq: s.o.dlq,
		tasks: s.tasks, batchRecords: s.batchRecords, logger: env.Logger, faults: s.faults.injector()}
	timelines := clusterTimelines(st.Timelines())
	if s.faultWrite > 0 {
		ff := s.faults
		ff.retry, ff.panic = s.faultWrite, 0
		timelines = failAfterWrites(timelines, ff.injector())
	}
	tt, sp, err := newTopology(ctx, rc, timelines, env.Logger)
	if err != nil {
		st.Close()
		return nil, trident.Config{}, err
	}
	env.CloseAtStop(st)
	env.CloseAtStop(sp) // closed first: the spout before the session
	cfg := trident.Config{MaxBatchesInFlight: 2, BatchEmitInterval: s.batchEvery, Store: clusterStore(env)}
	cfg.Topology.Logger = env.Logger
	cfg.Topology.RestartMinBackoff = 50 * time.Millisecond
	return tt, cfg, nil
}

// planCluster builds the topology as a submit plans it (squall.Env.Planning,
// on the client, to compute what it needs of the supervisors): the same
// streams and parallelism as buildCluster, from the settings of the
// submitting environment, with stand-ins for the Kafka spout and the
// Cassandra tables, which nothing opens. No session, client or spout is
// created.
func planCluster(env squall.Env, getenv func(string) string) (*trident.Topology, trident.Config, error) {
	s, err := parseClusterSettingsFor(getenv, true)
	if err != nil {
		return nil, trident.Config{}, err
	}
	tasks := max(s.tasks, 1)
	unopened := func(context.Context, int, int) (state.BackingMap[[]byte], error) {
		return nil, errors.New("roompresence: a planned topology opens no state")
	}
	tt := trident.NewTopology("roompresence")
	src := trident.OpaqueSource[kafka.Meta](decoder.Fields(), nil, nil) // never opened: nothing runs
	events := tt.NewStream("room-events", src.Parallelism(tasks))
	pipeline{timelines: unopened, faults: s.faults.injector(), tasks: tasks}.build(tt, events)
	cfg := trident.Config{MaxBatchesInFlight: 2, BatchEmitInterval: s.batchEvery}
	cfg.Topology.Logger = env.Logger
	return tt, cfg, nil
}

// failAfterWrites injects faults after writes of the maps f opens have
// landed: a write whose answer is lost (a timeout after the write was
// applied). The batch is replayed over its own writes, which the opaque
// map must recognise by their txid.
func failAfterWrites(f trident.BackingFactory, inj Injector) trident.BackingFactory {
	return func(ctx context.Context, partition, n int) (state.BackingMap[[]byte], error) {
		m, err := f(ctx, partition, n)
		if err != nil {
			return nil, err
		}
		return lostAnswers{m, inj}, nil
	}
}

type lostAnswers struct {
	state.BackingMap[[]byte]
	inj Injector
}

func (m lostAnswers) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	if err := m.BackingMap.MultiPut(ctx, keys, vals); err != nil {
		return err
	}
	return m.inj.Inject(ctx, "timeline write")
}
