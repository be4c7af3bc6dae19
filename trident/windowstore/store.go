// Package windowstore defines where Trident windows keep their state: a
// Store holds, per window task, one record per txid (the window's state
// after that batch and the windows it fired). The window shell in package
// trident writes the record of txid T in T's commit phase and reads it
// back when T is replayed, so that a replay re-emits exactly the windows
// the first commit fired; at each write it deletes the records older than
// the previous txid, which is committed by then.
//
// Memory is the in-memory store (tests, examples); package boltwindows
// keeps records in a bbolt file and trident/windowstore/cassandrawindows in
// Cassandra. Package windowstoretest is the conformance suite every
// implementation passes.
package windowstore

import (
	"context"
	"errors"

	"github.com/squallstream/squall/txn"
)

// Store keeps the records of window tasks. A task is named by an id (the
// window's name and the task's partition); records are opaque bytes.
// Implementations are safe for concurrent use by different ids; calls for
// one id come from one task at a time.
type Store interface {
	// Get returns the record of id at txid, or ErrNotFound.
	Get(ctx context.Context, id string, txid txn.TxID) ([]byte, error)
	// Last returns the record of id with the greatest txid below before,
	// and that txid, or ErrNotFound if there is none.
	Last(ctx context.Context, id string, before txn.TxID) (txn.TxID, []byte, error)
	// Put stores the record of id at txid, replacing any, and then deletes
	// the records of id with a txid below prune, atomically where the
	// backend can (a reader never sees the deletion without the record).
	Put(ctx context.Context, id string, txid txn.TxID, record []byte, prune txn.TxID) error
	// Remove deletes every record of id (Storm's WindowsStore.removeAll
	// for a window task): a window dropped from the topology, or the
	// partitions a smaller parallelism left behind. Removing an id without
	// records is not an error. The window's task must not be running.
	Remove(ctx context.Context, id string) error
}

// ErrNotFound is returned by Get and Last when there is no record.
var ErrNotFound = errors.New("windowstore: no record")
