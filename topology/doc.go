// Package topology is squall's tuple-level runtime, modelled on Apache
// Storm: spouts emit tuples, bolts process them, and an acker tracks every
// tuple tree so that a spout learns exactly when a message it emitted has
// been fully processed (Ack) or not (Fail, or a timeout).
//
// # Building and running
//
// A Builder declares components (spouts and bolts), their output streams
// and fields, how each bolt subscribes to its inputs (groupings) and how
// many executors and tasks each component has. Build validates the graph
// before anything runs. A LocalCluster runs a built Topology in-process
// inside a supervised worker.
//
// # Across workers
//
// RunWorker runs one worker's share of a topology in cluster mode: the
// executors of the tasks a WorkerSpec assigns to it, a transport server
// for what peers send them, and a transport client per peer (package
// transport). Executors send to remote tasks through the same bounded,
// batching queues as to local ones. A spout whose acker may be in another
// worker also times its trees out itself, so the trees of a worker that
// died fail and replay. See docs/topology.md, "Across workers".
//
// # Reliability
//
// A spout tuple emitted with a message id becomes the root of a tuple tree.
// Every tuple a bolt emits anchored to an input joins the input's trees
// (several anchors make a DAG). The acker keeps one small record per pending
// tree, the XOR of the random 64-bit ids of the tree's edges, so it never
// stores the tree itself. When the XOR returns to zero the tree is complete
// and the spout task that emitted the root receives Ack; when any tuple of
// the tree fails, or the tree does not complete within the message timeout,
// the spout receives Fail. Unanchored emits and spout emits without a message
// id are not tracked. With Config.Ackers = 0 nothing is tracked and a spout's
// Ack is called at emit time.
//
// # Errors and crashes
//
// A BasicBolt returns errors classified by package failure: a retryable or
// reported failure fails the input tuple (a reported one is also recorded
// for operators); any other error, and a panic anywhere in a spout or bolt,
// stops the whole worker fast. The supervisor records the crash with its
// stack and restarts the worker with backoff; spouts are opened again and
// their source replays what was never acked.
//
// # Execution
//
// Each executor is one goroutine that owns its tasks' instances. Tuples move
// between executors in batches over bounded channels: an executor buffers its
// output per destination and flushes a buffer when it is full or when the
// executor has no more input waiting, so a busy topology moves large batches
// and an idle one has low latency. Nothing is serialized in-process. Edge ids
// come from a per-executor PRNG seeded from crypto/rand.
package topology
