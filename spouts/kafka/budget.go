package kafka

import (
	"math"

	"github.com/squallstream/squall/txn"
)

// taskBudget is what is left of the per-task caps
// (MaxBatchRecordsPerTask, MaxBatchBytesPerTask) in the attempt a task is
// emitting. The executor emits a task's partitions one after the other
// within an attempt, and one attempt after the other.
//
// Each partition gets a fair share of what is left: the remainder divided
// by the owned partitions not emitted yet in the attempt, rounded up, so
// what one partition leaves flows to the next ones. A partition's first
// record is taken if it fits in the task's remainder (not just the
// share), and the task's first record whatever its size, so a batch
// always makes progress and never holds more than the caps, except a
// batch whose first record alone is over MaxBatchBytesPerTask: it holds
// that record only.
type taskBudget struct {
	attempt    txn.Attempt
	active     bool
	records    int // left; meaningful with a records cap
	bytes      int // left; meaningful with a bytes cap
	used       bool
	partitions int // emitted in the attempt
}

// limits returns the limits of a new batch of one partition in attempt a,
// and counts the partition as emitted.
func (e *emitter) limits(a txn.Attempt) limits {
	cfg := e.s.cfg
	lim := limits{maxRecords: cfg.MaxRecordsPerPartition, maxBytes: cfg.MaxBytesPerPartition, firstBytes: math.MaxInt, until: -1}
	if cfg.MaxBatchRecordsPerTask == 0 && cfg.MaxBatchBytesPerTask == 0 {
		return lim
	}
	b := &e.budget
	if !b.active || b.attempt != a {
		*b = taskBudget{attempt: a, active: true, records: cfg.MaxBatchRecordsPerTask, bytes: cfg.MaxBatchBytesPerTask}
	}
	left := max(e.owned-b.partitions, 1)
	b.partitions++
	if cfg.MaxBatchRecordsPerTask > 0 {
		lim.maxRecords = min(lim.maxRecords, ceilDiv(b.records, left))
	}
	if cfg.MaxBatchBytesPerTask > 0 {
		lim.maxBytes = min(lim.maxBytes, ceilDiv(b.bytes, left))
		if b.used {
			lim.firstBytes = b.bytes
		}
	}
	return lim
}

// spend takes what a partition's batch read from the budget.
func (e *emitter) spend(a txn.Attempt, res readResult) {
	b := &e.budget
	if !b.active || b.attempt != a || res.count == 0 {
		return
	}
	b.records = max(b.records-res.count, 0)
	b.bytes = max(b.bytes-res.bytes, 0)
	b.used = true
}

// exhausted reports whether lim lets no record in.
func (lim limits) exhausted() bool {
	return lim.maxRecords <= 0 || (lim.maxBytes <= 0 && lim.firstBytes <= 0)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
