package topology

// Batch recycling. An executor's outbox fills a buffer per destination
// executor and sends it whole; the receiving executor owns the batch. Once
// it is done with a batch it may give it back on its free channel
// (worker.boltFree, ackerFree, spoutFree), where the next sender to start
// a buffer for it takes it instead of allocating one. A batch of 256
// tuples is 20 KiB, so at millions of tuples a second recycling saves most
// of the allocation, and the garbage collection, of moving tuples.
//
// Who may give a batch back:
//   - acker and spout executors always: acker messages and tree outcomes
//     never leave them;
//   - a bolt executor only if every one of its bolts is a Borrower: an
//     ordinary Bolt may keep the *Tuple it was passed (to ack it later),
//     and that pointer is into the batch.
//
// A batch is cleared when it is given back (giveBack, also used for the
// batches a peer sent), so it keeps no old values reachable. A local
// executor's free channel holds as many batches as its queue (its sender
// fills the queue in a burst while the executor waits for a core, and needs
// that many buffers again when the executor has drained it); the batches a
// peer sent, at most freeBatches.

// Borrower is implemented by a Bolt whose Execute never keeps the *Tuple it
// is passed after it returns: it acks or fails the tuple before returning,
// or keeps a copy (h := *t) to ack or fail later, and may keep its values
// (t.Values()). Its executor then reuses the memory of the batches it received for new
// ones, which saves an allocation of about 80 bytes per tuple. A Borrower
// that does keep the pointer sees it overwritten by later tuples.
type Borrower interface {
	Bolt
	// BorrowsTuples marks the bolt; it is never called.
	BorrowsTuples()
}

// giveBack clears batch b and offers it on free; a full free channel
// drops it for the collector.
func giveBack[T any](free chan []T, b []T) {
	clear(b) // let the tuples' values go
	select {
	case free <- b[:0]:
	default:
	}
}
