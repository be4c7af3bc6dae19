package kafka

import (
	"context"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// batchEnds are where a partition's emitted, not yet committed batches
// end, in increasing txid order, for the lag mirror.
type batchEnds struct {
	tp   topicPartition
	ends []batchEnd
}

type batchEnd struct {
	txid txn.TxID
	next int64
}

// noteEnd remembers that the batch of txid for p ends at next. A batch of
// txid (a first emit or a replay) replaces those of txid and later: the
// coordinator discarded them. So the list holds only batches in flight,
// at most MaxBatchesInFlight of them.
func (e *emitter) noteEnd(p spout.Partition, txid txn.TxID, next int64) {
	if e.s.mirror == nil {
		return
	}
	b := e.ends[p]
	if b == nil {
		tp, err := parsePartition(p)
		if err != nil {
			return // Emit already refused it
		}
		b = &batchEnds{tp: tp}
		e.ends[p] = b
	}
	i := len(b.ends)
	for i > 0 && b.ends[i-1].txid >= txid {
		i--
	}
	b.ends = append(b.ends[:i], batchEnd{txid: txid, next: next})
}

// Committed implements spout.Committer: every txid up to txid committed,
// so the mirror gets, for each of the task's partitions, the end of its
// latest batch up to txid. Batches emitted before a worker restart are not
// known here; the first batch committed after it brings the mirror up to
// date. It never fails: the mirror is for monitoring only.
func (e *emitter) Committed(_ context.Context, txid txn.TxID) error {
	if e.s.mirror == nil {
		return nil
	}
	for p, b := range e.ends {
		i := 0
		for i < len(b.ends) && b.ends[i].txid <= txid {
			i++
		}
		if i == 0 {
			continue
		}
		last := b.ends[i-1]
		e.s.mirror.note(b.tp, last.next, last.txid)
		if i == len(b.ends) {
			delete(e.ends, p)
			continue
		}
		b.ends = append(b.ends[:0], b.ends[i:]...)
	}
	return nil
}
