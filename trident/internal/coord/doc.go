// Package coord is the batch coordinator of a Trident-style stream: a pure
// state machine that decides which batch (txid, attempt) to emit, which one
// may commit, and when a batch has succeeded. It is the Go counterpart of
// Storm's MasterBatchCoordinator, without goroutines, clocks or I/O.
//
// # Phases
//
// A batch is first processed (pipelined: up to Config.MaxBatchesInFlight
// consecutive txids after the last committed one may be active at once) and
// then committed. Commits happen strictly in txid order, one at a time: only
// the lowest uncommitted txid may commit, and only once its processing has
// been acknowledged.
//
//	Emit(N:a) ──ack──▶ processed ──(N is the lowest)──▶ Commit(N:a) ──ack──▶ Success(N:a)
//	    │                                                   │
//	    └──fail / timeout──▶ discard N and every later txid ◀┘ fail / timeout
//	                         re-emit them with attempt+1
//
// # Inputs and outputs
//
// The shell (the goroutine that owns a Coordinator) feeds it inputs: Ack and
// Fail for the phase (processing or commit) of an attempt it announced, Tick
// for the passage of time and SetSpoutReady for the spouts' readiness. The coordinator never acts on its
// own; each input may queue actions, which the shell collects with Ready,
// executes in order and confirms with Advance, in the style of etcd raft's
// RawNode.
//
// # Ordering contract
//
// Actions must be executed in the order Ready returns them, and an action
// may only be executed once every action before it has completed:
//
//   - A Persist action precedes every EmitBatch and Success that depends on
//     it: the attempt numbers of emitted batches and the last committed txid
//     are durable before any other component hears of them ("persist before
//     you announce"). A batch is never emitted with an attempt number that a
//     restarted coordinator could use again, and a Success is never
//     announced for a commit that a restarted coordinator would redo.
//   - If the shell cannot complete an action (for example the store is
//     unreachable), it must not execute the actions after it. It may retry
//     the action, or stop and later restart the coordinator from the last
//     persisted State with New; both are safe.
//   - Commit actions do not need a Persist: the commit phase is not durable,
//     and a restarted coordinator re-runs an uncommitted batch from the
//     processing phase with a higher attempt number.
//
// # Time
//
// The coordinator counts logical ticks. The shell decides what a tick is
// (for example 100ms of its ticker) and expresses Config.EmitInterval and
// Config.BatchTimeout in ticks. With BatchTimeout zero the coordinator never
// times batches out itself, and the shell reports timeouts with Fail.
//
// A shell need not be woken for every tick: NextTick says which tick can
// next change the coordinator (none until another input, when the window is
// full and nothing times out), and Elapse delivers the ticks the shell
// slept through in one go, before its next input, so that the coordinator
// counts every tick that passed. While the spouts hold batches back
// (SetSpoutReady(false)), NextEmit says at which tick their readiness
// next matters: the first at which the window, the emit interval and the
// retry backoff would let a batch start; a shell that polls them need not
// ask before it.
//
// # Retries
//
// After a failure the re-run waits Config.RetryBackoff ticks, doubled for
// every further failure since the last commit up to Config.MaxRetryBackoff
// and jittered from the seeded Config.Seed (internal/backoff); batches already
// in flight still commit meanwhile. With Config.MaxAttempts, a txid whose
// failures reach the limit halts the coordinator with an
// *AttemptLimitError. A failure whose reason is an outage
// (failure.IsUnavailable) backs off but is not counted: waiting can fix
// it. Counts are part of the durable State, and Restarted counts the
// attempt that a crashed predecessor left in flight, so a batch that
// crashes the worker every time halts too.
//
// # Recovery
//
// New takes the last persisted State: the last committed txid and the
// highest attempt number used for each txid after it. The coordinator
// resumes at the next txid, and every batch it emits has an attempt number
// above any used before, so no (txid, attempt) pair is ever announced twice.
// With an attempt limit, the State also carries each uncommitted txid's
// failure count.
//
// # Differences from Storm
//
// Storm's MasterBatchCoordinator drops a txid's status on any fail, even a
// stale one for an older attempt, which can stall or re-run the current
// attempt; here a fail or ack for an attempt other than the current one is
// ignored. Acks and fails name their phase, so that a duplicated processing
// ack cannot pass for the commit's. The committed txid is persisted before
// Success is announced (Storm writes it after). Storm has no retry limit;
// Config.MaxAttempts optionally halts the coordinator with an
// *AttemptLimitError. docs/coordinator.md lists every difference.
//
// Package coord imports only pure packages (failure, internal/backoff,
// state, txn): never goroutines, clocks, networks, stores or the
// runtime; its shell is the master coordinator spout in
// trident/internal/runtime.
package coord
