// Package spouttest provides test doubles for code built on package spout:
// Source, an in-memory partitioned log with an Emitter usable by both
// partitioned flavours; Collector, which records what a spout emits; and
// Fixed, a non-transactional batch spout over a fixed list of values.
//
// Source can append records, add and remove partitions, delete old
// records (retention), limit the size of each batch (so that a replay may
// read more records than the first attempt) and inject emitter failures.
package spouttest
