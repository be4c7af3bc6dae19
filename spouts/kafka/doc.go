// Package kafka reads Trident batches from Apache Kafka: an opaque (and a
// transactional) partitioned spout on github.com/segmentio/kafka-go.
//
// For exact replay the spout's emitter reads a partition by explicit offset
// (kafka-go's Client.Fetch), never through a consumer group: a batch is a
// partition's offset range, stored with the batch's txid, so a replay of the
// same txid can read the same range again.
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
