// Package simulation runs a Trident topology's batch protocol in one
// goroutine, deterministically: a seed decides the order in which every
// message is delivered, which messages are lost, which operations, spout
// reads and state writes fail, and when the worker crashes. The same seed
// replays the same run, event for event, so a failing seed is a
// reproducible bug report.
//
// What runs is real: the batch coordinator (trident/internal/coord), the
// completion machines of the counting tasks (trident/internal/completion),
// the acker's tracker (package acker), the partitioned spout's allocator
// and executors (trident/spout) over a spouttest.Source and the
// coordination store, and opaque or transactional map state over
// statetest.FaultMap. What is simulated is everything the goroutine shells
// of the runtime do around them: the network between tasks (per-link FIFO,
// as between two executors), the tuple trees' edge ids and acker messages,
// the master's and the bolts' reactions to actions, virtual ticks, and a
// crash (every task and message is lost; durable state, the coordination
// store and the coordinator's persisted state survive).
//
// The topology: a partitioned source (three partitions, two tasks) feeding,
// by word, a counting committer (two tasks), as a word count does. Run
// checks the result against an oracle; the test runs hundreds of seeds.
//
// The simulation models the shells; it does not run them. The shells are
// covered by the fault suites of package trident, which run the real
// goroutines under testing/synctest but cannot replay a seed event for
// event.
package simulation
