// Package nontransactional implements non-transactional state: a map that
// reads, updates and writes values with no txid bookkeeping.
//
// It is at-least-once, not exactly-once. A batch that fails after some of
// its writes landed is replayed, and the replay applies its updates again
// on top of them: a count counts twice. Use it when that is acceptable
// (idempotent updates such as "last seen", or approximate figures) and the
// saving matters: the stored value is only the user value and a one-byte
// header, and nothing is compared on read. See docs/state.md.
package nontransactional
