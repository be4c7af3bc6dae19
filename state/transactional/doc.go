// Package transactional implements transactional state: exactly-once
// updates over batches that are replayed with identical content, as with a
// transactional spout.
//
// Each stored value carries the txid of the batch that last wrote it. When
// batch T finds a value already written by T and not written earlier in
// this commit, T's update has been applied before the replay and is
// skipped. This needs only one value per key (less than opaque state) but
// is exact only under two conditions, both guaranteed by a persistent
// aggregation fed by a transactional spout:
//
//   - a replay of T has exactly the content of the first attempt;
//   - each key is updated once per batch (the aggregation pre-combines a
//     batch per key). Were a key updated twice in a batch and only the
//     first write had landed before a failure, the replay would skip both.
//
// Use package opaque when either may not hold. See docs/state.md.
package transactional
