// Package acker tracks tuple trees the way Storm's acker does: with one
// small fixed record per pending tree, never the tree itself.
//
// # The XOR algorithm
//
// Every edge of a tuple tree (a tuple sent to one task) gets a random
// 64-bit id. A spout tuple's root id names the tree. Three kinds of message
// reach the tracker, all keyed by root:
//
//   - init (root, xor, spoutTask): the spout emitted the root's first
//     tuples; xor is the XOR of their edge ids (zero when it had no
//     targets) and spoutTask is the task to tell about the outcome;
//   - ack (root, xor): a bolt acked an input; xor is the input's edge id
//     XOR the ids of every edge it emitted anchored to that input;
//   - fail (root): a bolt failed an input of this tree.
//
// A fourth, reset-timeout (root), only restarts the tree's timeout.
//
// Each edge id is XORed into the tree's value exactly twice: once when the
// edge is created (by the init or by the parent's ack) and once when its
// tuple is acked. The value is therefore zero once every tuple has been
// acked, and, with random 64-bit ids, nonzero before that except with
// probability about 2^-64 per message. Multi-anchored tuples carry one edge
// per anchor and root, so they belong to every tree they are anchored to.
//
// # What a Tracker keeps
//
// Per pending root: the root id, the XOR value, the spout task (NoTask
// until the init), a failed flag, an init-seen flag and a timeout bucket:
// 22 bytes in a dense struct-of-arrays slab of fixed-size pages, plus a
// 4-byte slot in a Robin Hood open-addressing index kept between 1/2 and
// 3/4 full as it grows. That is 27 to 30 heap bytes per pending tree for
// large tables (28.5 at a million), against 35 to 56 for a Go map. Finished
// trees free their space: the slab stays dense and gives back pages, and
// the index shrinks. See docs/acker.md for the layout and measured figures.
//
// # Ordering contract
//
// Init, Ack, Fail and ResetTimeout may arrive in any order; a root the
// Tracker does not know is created by whichever message comes first, so an
// ack or a fail before the init works. After each message the Tracker
// decides:
//
//   - init not seen yet: Pending (a fail is remembered);
//   - init seen and a fail recorded: the root is removed, Failed;
//   - init seen and the value is zero: the root is removed, Completed;
//   - otherwise Pending.
//
// A root reports a final status (Completed, Failed or TimedOut) once; the
// caller tells the outcome's SpoutTask. Messages for a root that arrive
// after it was done (acks from other branches of a failed tree, say)
// create a new entry that never sees an init; it times out with SpoutTask
// NoTask, which the caller can only count. This is Storm's behaviour, and the
// reason Len counts such entries too.
//
// Storm checks the zero value before the failed flag. The Tracker checks the
// failed flag first: the two meet only when a fail arrived before the init,
// and failing (so replaying) is the safe side for exactly-once processing.
//
// # Timeouts
//
// Time is counted in ticks; the caller owns the clock and calls Tick every
// period T. Entries sit in one of Config.TimeoutBuckets rotating buckets, as
// in Storm's RotatingMap: Init, ResetTimeout, Fail and the creation of an
// entry put it in the newest bucket; Ack does not (as in Storm, acks do not
// extend a tree's life). Tick rotates, and what was in the oldest bucket
// expires and is reported through Tick's callback: a root expires on the
// TimeoutBuckets-th Tick after it was last put, so between
// (TimeoutBuckets-1)·T and TimeoutBuckets·T after that. The Tracker is the
// authority for timeouts; a spout needs no timer of its own.
//
// # Concurrency and side effects
//
// A Tracker starts no goroutines, reads no clock, does no I/O and is not
// safe for concurrent use: one goroutine owns it (one per acker task). The
// package has no mutable package-level state.
package acker
