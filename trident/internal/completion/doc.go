// Package completion tracks, for one task of a Trident stage, when each
// batch attempt is complete: every upstream task has reported how many data
// tuples it sent, and that many arrived. It is a pure state machine, without
// goroutines, clocks or tuples; the shell (the stage's bolt) feeds it
// inputs, runs the stage's operations and executes the actions it queues.
//
// # Inputs
//
//   - Data(a, early): a data tuple of attempt a arrived (early: from an
//     upstream stage that reports in the processing phase). It returns
//     whether the shell should run the stage's operations on it; the shell
//     acks data tuples itself.
//   - Report(a, from, count, h): upstream component from reports that one
//     of its tasks sent count tuples of a; h is the report's handle.
//   - Commit(a, h): the commit of a started (committers only).
//   - Fail(a, err): running an operation on a tuple of a failed.
//   - Finished(a, err): the shell ran the final step of a (see Finish).
//   - Success(txid): txid committed; every record up to it is dropped.
//
// Handles are opaque to the machine: it holds some of them to keep a
// batch's tuple tree open and tells the shell when to ack or fail them.
//
// # Actions
//
// Next returns the queued actions one at a time, in order:
//
//   - Ack(h), Fail(h): ack or fail a handle the machine held (or just
//     received and does not need).
//   - Finish(a, h): every report and every counted tuple of a arrived (and,
//     for a committer, its commit): the shell runs the batch's final step
//     (aggregations, the state commit, the counts sent downstream,
//     anchored to h) and then calls Finished(a, err).
//   - Drop(a): the machine forgot a; the shell frees its per-batch data.
//   - Mismatch(a): the counts of a did not add up; the attempt failed.
//   - Unprocessed(a): a commit arrived for an attempt this task did not
//     process; its handle is failed next.
//
// # Ordering contract
//
//   - The shell executes actions in the order Next returns them, before its
//     next input. A Mismatch comes before the Fail actions of the handles it
//     releases, so the failure is reported before the batch's tree fails.
//   - Finish is always the last action queued by an input. The shell calls
//     Finished for it before any other input; Finished queues Ack of the
//     anchor and Drop on success, or the Fail actions of every held handle
//     on error. A batch attempt is finished at most once.
//   - An attempt is never finished before all Config.Reports reports arrived
//     and the number of data tuples Data counted equals the sum of their
//     counts. In a stage with both early and late upstream stages, the first
//     early report is held until every early report and every early tuple
//     arrived, then acked (a mismatch fails the batch then); the first late
//     report is the anchor of Finish. A committer acks reports at once and
//     anchors Finish to its commit.
//   - A failed attempt stays recorded as failed: its later reports and
//     commits are failed too, and its data is not processed, until a newer
//     attempt of the txid or the txid's success replaces it. Tuples of an
//     attempt older than the recorded one, or not newer than the finished
//     one, are ignored (reports are acked).
//   - A newer attempt replaces an older one: the older one's held handles
//     fail and it is dropped.
//   - Success(txid) fails the held handles of every record up to txid, in
//     txid order, and forgets them: no state up to txid remains.
//
// The stage bolt in trident/internal/runtime is the shell; docs/trident.md
// describes the protocol around it.
//
// Package completion imports only state (for TxID) and coord (for
// Attempt), both pure: no goroutines, clocks, tuples, stores or the
// runtime.
package completion
