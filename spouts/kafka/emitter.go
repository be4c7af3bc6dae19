package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// emitter is one task's spout.Emitter[Meta] (Storm's
// KafkaTridentSpoutEmitter). It reads by explicit offsets through the
// spout's shared client, never through a consumer group. One goroutine (the
// task's executor) calls it.
type emitter struct {
	s    *Spout
	task int

	// firstSeek pins the start of a partition that has no position yet
	// (no stored metadata under this topology id), so that a replay of
	// its first batch starts where the first attempt did even with Latest
	// or AtTime (Storm's firstPollOffset). Entries go when the partition
	// has a position or leaves the task.
	firstSeek map[spout.Partition]int64

	// ahead holds the read-ahead fetch of each partition (readahead.go).
	ahead map[spout.Partition]*ahead

	// ends are where the task's batches in flight end, for the lag
	// mirror (ends.go).
	ends map[spout.Partition]*batchEnds

	// owned is the number of partitions the task owns (Refresh), and
	// budget what is left of the per-task caps in the current attempt.
	owned  int
	budget taskBudget

	// parts are the partitions of the last Refresh.
	parts []spout.Partition
}

func (s *Spout) newEmitter(task int) spout.Emitter[Meta] {
	return &emitter{s: s, task: task, firstSeek: map[spout.Partition]int64{}, ahead: map[spout.Partition]*ahead{},
		ends: map[spout.Partition]*batchEnds{}}
}

// Refresh implements spout.Refresher: it forgets the pinned starts,
// read-aheads and batch ends of partitions the task no longer owns.
func (e *emitter) Refresh(_ context.Context, owned []spout.Partition) error {
	e.owned = len(owned)
	keep := make(map[spout.Partition]bool, len(owned))
	for _, p := range owned {
		keep[p] = true
	}
	for p := range e.firstSeek {
		if !keep[p] {
			delete(e.firstSeek, p)
		}
	}
	for p := range e.ahead {
		if !keep[p] {
			delete(e.ahead, p)
		}
	}
	for p := range e.ends {
		if !keep[p] {
			delete(e.ends, p)
		}
	}
	for _, p := range e.parts {
		if tp, err := parsePartition(p); err == nil && !keep[p] {
			// Another worker may write its letters now: the spout reads
			// them back if the partition returns.
			e.s.letters.forget(tp)
		}
	}
	e.parts = append(e.parts[:0], owned...)
	return nil
}

// Emit implements spout.Emitter: a new batch of p from where prev ended,
// or from the configured start when p has no position under this
// topology id. The batch holds at most MaxRecordsPerPartition records and
// about MaxBytesPerPartition bytes, what the log holds now: it does not
// wait for records, so an idle partition gives an empty batch that keeps
// its position.
func (e *emitter) Emit(ctx context.Context, a txn.Attempt, p spout.Partition, prev *Meta, c spout.Collector) (Meta, error) {
	m, err := e.emit(ctx, a, p, prev, c)
	if err == nil {
		e.noteEnd(p, a.TxID, m.Next)
	}
	return m, err
}

func (e *emitter) emit(ctx context.Context, a txn.Attempt, p spout.Partition, prev *Meta, c spout.Collector) (Meta, error) {
	if e.s.closed.Load() {
		return Meta{}, ErrClosed
	}
	tp, err := parsePartition(p)
	if err != nil {
		return Meta{}, err
	}
	if prev != nil && prev.TopologyID == e.s.cfg.TopologyID {
		delete(e.firstSeek, p)
	}
	start, err := e.start(ctx, tp, p, prev)
	if err != nil {
		return Meta{}, err
	}
	lim := e.limits(a)
	if lim.exhausted() {
		// The task's batch is full: an empty batch keeps the position.
		return Meta{First: start, Next: start, TopologyID: e.s.cfg.TopologyID, TxID: a.TxID}, nil
	}
	res, err := e.s.read(ctx, a, tp, start, lim, e.takeAhead(ctx, p, start), c)
	var oor *OutOfRangeError
	if errors.As(err, &oor) && res.count == 0 {
		if e.s.cfg.OnOutOfRange != SkipToEarliest || oor.Earliest < 0 {
			return Meta{}, failure.Reported(err)
		}
		start, err = e.skip(a, oor, c)
		if err == nil {
			if _, pinned := e.firstSeek[p]; pinned {
				e.firstSeek[p] = start
			}
			res, err = e.s.read(ctx, a, tp, start, lim, nil, c)
		}
	}
	if err != nil {
		return Meta{}, err
	}
	e.spend(a, res)
	if res.capped {
		e.readAhead(p, tp, res.next)
	}
	return Meta{First: start, Next: res.next, Count: res.count, TopologyID: e.s.cfg.TopologyID, TxID: a.TxID}, nil
}

// start returns where a new batch of p starts.
func (e *emitter) start(ctx context.Context, tp topicPartition, p spout.Partition, prev *Meta) (int64, error) {
	if prev != nil && prev.TopologyID == e.s.cfg.TopologyID {
		return prev.Next, nil
	}
	if off, ok := e.firstSeek[p]; ok {
		return off, nil
	}
	// A partition added while the spout runs starts at its first record,
	// whatever Start says: its records all came after the start.
	at := e.s.cfg.Start
	if prev == nil && e.s.lister.joinedLater(p) {
		at = Earliest
	}
	off, err := e.s.offsetFor(ctx, tp, at)
	if err != nil {
		return 0, err
	}
	if prev != nil {
		e.s.cfg.Logger.Info("kafka spout: partition stored by another topology id; starting anew", "partition", p,
			"stored", prev.String(), "topology_id", e.s.cfg.TopologyID, "start", e.s.cfg.Start.String(), "offset", off)
	}
	e.firstSeek[p] = off
	return off, nil
}

// skip applies SkipToEarliest to oor: it reports and counts the loss and
// returns the new start.
func (e *emitter) skip(a txn.Attempt, oor *OutOfRangeError, c spout.Collector) (int64, error) {
	lost := max(oor.Earliest-oor.Offset, 0)
	e.s.stats.outOfRangeSkips.Add(1)
	e.s.stats.offsetsLost.Add(uint64(lost))
	err := fmt.Errorf("%w; skipping to the earliest offset %d (txid %d, %d offsets lost)", oor, oor.Earliest, a.TxID, lost)
	e.s.cfg.Logger.Warn("kafka spout: offset out of range; skipping to the earliest offset", "topic", oor.Topic,
		"partition", oor.Partition, "offset", oor.Offset, "earliest", oor.Earliest, "end", oor.End, "lost", lost, "txid", a.TxID)
	c.ReportError(err)
	return oor.Earliest, nil
}

// Reemit implements spout.Emitter: exactly the Count records at offsets
// [meta.First, meta.Next) again, whatever the topology id stored with
// them (a frozen batch is redone even after a redeploy). If they are no
// longer all there, it returns an error matching spout.ErrUnavailable,
// and ErrOutOfRange too if the range starts before the log does.
func (e *emitter) Reemit(ctx context.Context, a txn.Attempt, p spout.Partition, meta Meta, c spout.Collector) error {
	err := e.reemit(ctx, a, p, meta, c)
	if err == nil && meta.TopologyID == e.s.cfg.TopologyID {
		e.noteEnd(p, a.TxID, meta.Next)
	}
	return err
}

func (e *emitter) reemit(ctx context.Context, a txn.Attempt, p spout.Partition, meta Meta, c spout.Collector) error {
	if e.s.closed.Load() {
		return ErrClosed
	}
	tp, err := parsePartition(p)
	if err != nil {
		return err
	}
	if meta.Next < meta.First || meta.Count < 0 || int64(meta.Count) > meta.Next-meta.First {
		return fmt.Errorf("%w: partition %s: inconsistent %s", spout.ErrBadMetadata, p, meta)
	}
	if meta.Count == 0 {
		return nil
	}
	// The range was read within the caps once; reading it needs no caps.
	lim := limits{maxRecords: meta.Count + 1, maxBytes: math.MaxInt, until: meta.Next}
	res, err := e.s.read(ctx, a, tp, meta.First, lim, nil, c)
	var oor *OutOfRangeError
	switch {
	case errors.As(err, &oor):
		return fmt.Errorf("%w: partition %s: replaying %s: %w", spout.ErrUnavailable, p, meta, err)
	case err != nil:
		return err
	case res.count != meta.Count:
		return fmt.Errorf("%w: partition %s: replaying %s: %d records are left in the range (compacted or truncated)",
			spout.ErrUnavailable, p, meta, res.count)
	}
	return nil
}
