package boltstore

import (
	"errors"

	bolt "go.etcd.io/bbolt"
)

// A write is one caller's write transaction, waiting in the group.
type write struct {
	fn   func(*bolt.Tx) error
	done chan error // receives the write's outcome once
}

// group commits concurrent writes together: a write that arrives while
// another commit is in progress waits, and the next commit applies every
// waiting write, in arrival order, in one bbolt transaction, so one pair
// of fsyncs makes them all durable. No write waits for a timer: a write
// arriving while nothing commits commits at once, alone.
//
// The first caller to find no commit in progress becomes the leader: it
// commits the queue, then whatever queued meanwhile, until the queue is
// empty. The leader is always a caller of update, so the group owns no
// goroutine.
type group struct {
	queue      []*write
	committing bool
}

// errFailedWrite marks the one write whose function failed, aborting the
// shared transaction.
var errFailedWrite = errors.New("boltstore: one write of the group failed")

// commit runs fn in a write transaction shared with the writes that
// queue with it, and returns fn's outcome: fn's error, or the
// transaction's, or nil once fn's changes are durable.
func (s *Store) commit(fn func(*bolt.Tx) error) error {
	w := &write{fn: fn, done: make(chan error, 1)}
	s.gmu.Lock()
	s.group.queue = append(s.group.queue, w)
	if s.group.committing {
		s.gmu.Unlock()
		return <-w.done
	}
	s.group.committing = true
	for len(s.group.queue) > 0 {
		batch := s.group.queue
		s.group.queue = nil
		s.gmu.Unlock()
		s.commitBatch(batch)
		s.gmu.Lock()
	}
	s.group.committing = false
	s.gmu.Unlock()
	return <-w.done
}

// commitBatch applies batch in one transaction and sends each write its
// outcome. Each write sees the changes of the writes before it. A write
// whose function fails leaves the batch (like bolt.DB.Batch): the
// transaction is rolled back, the write runs alone, and the others run
// again together. A write's function may therefore run more than once,
// and must only depend on the transaction.
func (s *Store) commitBatch(batch []*write) {
	for len(batch) > 1 {
		failed := -1
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i, w := range batch {
				if err := w.fn(tx); err != nil {
					failed = i
					return errFailedWrite
				}
			}
			return nil
		})
		if failed < 0 {
			for _, w := range batch {
				w.done <- err
			}
			return
		}
		w := batch[failed]
		w.done <- s.db.Update(w.fn)
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
	if len(batch) == 1 {
		batch[0].done <- s.db.Update(batch[0].fn)
	}
}
