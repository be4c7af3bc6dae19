package spout

import (
	"fmt"
	"slices"

	"github.com/squallstream/squall/txn"
)

// tracker is an executor's memory of the batches it emitted that have not
// committed yet ("live" batches), shared by both partitioned flavours. It
// does no I/O.
//
// Its main job is to tell, for a partition this task owns in batch N,
// where the previous batch of that partition ended when that is not in
// the store yet: in one of this task's own live batches, or unknown,
// because a live batch gave the partition to another task (the partition
// set changed while batches were in flight). An unknown position is never
// guessed: the partition sits the batch out until the earlier batches
// commit and their metadata is in the store. Storm guesses (it falls back
// to the last stored metadata), which emits the same records in two
// batches when partitions move between tasks with several batches in
// flight.
type tracker[M any] struct {
	task, numTasks int
	committed      txn.TxID // every txid up to this one committed
	live           map[txn.TxID]*record[M]
	owned          []Partition // the partitions last given to the Refresher
	refreshed      bool        // owned was given to the Refresher
}

// record is one live batch as this task emitted it.
type record[M any] struct {
	attempt txn.Attempt
	all     []Partition // every partition of the batch, sorted
	mine    []Partition // this task's share
	results map[Partition]result[M]
	done    bool // EmitBatch returned nil
}

// result is what happened to one partition of a live batch.
type result[M any] struct {
	meta    M
	skipped bool // the partition has no batch in this txid
	stored  bool // the store holds this txid's entry for the partition
}

func newTracker[M any](task, numTasks int) tracker[M] {
	return tracker[M]{task: task, numTasks: numTasks, live: map[txn.TxID]*record[M]{}}
}

// begin records the start of b and returns its record. A txid at or below
// a live one discards that batch and every later one: the batch
// allocator re-emits them all.
//
// What committed the executor learns from successes and from the batches
// themselves (Batch.Committed), never by taking the first batch it sees
// for the one after the last commit: an executor may start while batches
// are in flight, and the announcement of an earlier batch may be lost.
func (t *tracker[M]) begin(b Batch) (*record[M], error) {
	txid := b.Attempt.TxID
	if err := checkSorted(b.Partitions); err != nil {
		return nil, err
	}
	if b.Committed > t.committed {
		t.committed = b.Committed
		for k := range t.live {
			if k <= t.committed {
				delete(t.live, k)
			}
		}
	}
	if txid <= t.committed {
		return nil, fmt.Errorf("%w: txid %d, committed up to %d", ErrStale, txid, t.committed)
	}
	for k := range t.live {
		if k >= txid {
			delete(t.live, k)
		}
	}
	r := &record[M]{
		attempt: b.Attempt,
		all:     b.Partitions,
		mine:    Assign(b.Partitions, t.task, t.numTasks),
		results: make(map[Partition]result[M]),
	}
	t.live[txid] = r
	return r, nil
}

// changed reports whether r's partitions differ from the ones last given
// to the Refresher, and remembers them.
func (t *tracker[M]) changed(r *record[M]) bool {
	if t.refreshed && slices.Equal(t.owned, r.mine) {
		return false
	}
	t.owned, t.refreshed = r.mine, true
	return true
}

// prev returns where partition p stood before batch txid, as far as this
// task's live batches know: the metadata of its latest live batch of p
// (inMemory), or nothing, meaning the store's latest entry is right
// (certain and not inMemory). certain is false when a live batch before
// txid gave p to another task, or failed before reaching p: then nobody
// knows yet where p's next batch starts.
func (t *tracker[M]) prev(p Partition, txid txn.TxID) (meta M, inMemory, certain bool) {
	var zero M
	for k := txid - 1; k > t.committed; k-- {
		r, ok := t.live[k]
		if !ok {
			return zero, false, false
		}
		o, ok := owner(r.all, p, t.numTasks)
		if !ok {
			continue // nobody emitted p in k
		}
		if o != t.task {
			return zero, false, false
		}
		res, ok := r.results[p]
		switch {
		case !ok:
			return zero, false, false
		case res.skipped:
			continue
		default:
			return res.meta, true, true
		}
	}
	return zero, false, true
}

// record returns the live record of attempt a if it was emitted without
// error.
func (t *tracker[M]) record(a txn.Attempt) (*record[M], bool) {
	r, ok := t.live[a.TxID]
	if !ok || r.attempt != a || !r.done {
		return nil, false
	}
	return r, true
}

// success records that txid committed, forgets it and the batches before
// it, and returns its record if it was live.
func (t *tracker[M]) success(txid txn.TxID) *record[M] {
	r := t.live[txid]
	if txid > t.committed {
		t.committed = txid
	}
	for k := range t.live {
		if k <= txid {
			delete(t.live, k)
		}
	}
	return r
}
