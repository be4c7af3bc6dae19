// Package kafka reads Trident batches from Apache Kafka: an opaque and a
// transactional partitioned spout on github.com/segmentio/kafka-go.
//
//	sp, err := kafka.New(ctx, kafka.Config{Brokers: brokers, Topics: []string{"events"}, Topology: "counts"})
//	if err != nil { ... }        // unknown topics, unreachable brokers: here
//	defer sp.Close()             // after the topology stopped
//	s := t.NewStream("events", sp.Opaque().Parallelism(2))
//
// A batch of a partition is an offset range, kafka.Meta{First, Next,
// Count, TopologyID, TxID}, kept by the trident/spout executors in the
// coordination store, which is the source of truth for offsets. The
// emitter reads a partition by explicit offset (kafka-go's Client.Fetch),
// never through a consumer group, so a replay can read the same range
// again: Reemit emits exactly [First, Next) or fails with
// spout.ErrUnavailable. Progress is mirrored, for lag tools only, to the
// committed offsets of a consumer group named after the topology.
//
// Ordering contracts, as the executors rely on them:
//
//   - Emit starts at prev.Next when prev carries this deployment's
//     TopologyID, and otherwise at Config.Start (a partition added while
//     the spout runs: at its first record). The start of a partition's
//     first batch is pinned until that batch is stored, so its replays
//     start there too.
//   - Emit never waits for records: an idle partition gives an empty
//     batch {p, p, 0} that keeps the position.
//   - Records a Decoder rejects (an error or a panic) are written to the
//     dead-letter topic, and acknowledged, before Emit or Reemit returns;
//     a letter too large for the topic, or refused for good, is written
//     truncated instead, so a poison pill never stalls the stream.
//   - A record is dead-lettered once across attempts, replays and
//     restarts: the letters of a source partition go to one partition of
//     the dead-letter topic, which the spout reads back (ledger.go) before
//     writing letters it does not know to be there.
//   - A batch of a partition holds at most MaxRecordsPerPartition records
//     and about MaxBytesPerPartition bytes (keys, values and headers); the
//     per-task caps bound the batch over all of a task's partitions.
//   - Read-ahead fetches are used only by a batch that starts exactly
//     where they did; they never change what a batch holds.
//
// Broker and network trouble fails the batch as retryable (it is
// replayed) and makes the spout reconnect with backoff; an offset out of
// range fails it as reported unless Config.OnOutOfRange says to skip. See
// docs/kafka.md for configuration, start positions, topology ids and
// redeploys, the lag mirror, decoding and dead letters.
//
// Config.SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and Config.TLS apply to
// every connection of the spout: one transport serves metadata, offsets,
// fetches, the lag mirror and the dead-letter writer. A rejected login or a
// failed TLS handshake fails New at once with ErrAuthentication.
//
// Kafka compatibility: brokers 4.0.1 and newer, or 3.9. Kafka 4.0.0 rejects
// the JoinGroup v1 request that kafka-go sends.
//
// # Testing
//
// Tests in this package run against a real Kafka broker (started by
// scripts/services.sh and found through internal/testenv) and against the
// in-process broker of package kafkatest, which needs no Java. See
// docs/testing.md.
package kafka
