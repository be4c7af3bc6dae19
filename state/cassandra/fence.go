package cassandra

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/squallstream/squall/state"
)

// Fencing. Every backing map takes a new epoch from a row of the
// keyspace's fencing table when it is opened (a compare-and-set with a
// lightweight transaction), and writes every cell with a timestamp made of
// that epoch and a sequence number that grows with each MultiPut:
//
//	timestamp = 1<<62 | epoch<<seqBits | seq
//
// Cassandra keeps, per cell, the write with the greatest timestamp, in
// whatever order the writes arrive. So:
//
//   - a map opened later always wins over a map opened earlier: its late
//     writes land under the newer ones and are never read;
//   - within one map a later MultiPut wins over an earlier one even when
//     the earlier one arrives later (a write that timed out on the client
//     and was applied by the server afterwards, a retry of a replay).
//
// Epochs follow owner generations. The fencing row of a table keeps, with
// its epoch, the newest generation that opened a map over it (see
// state.Fence; the Trident runtime opens state with state.WithFence). An
// open by generation g fails with a *state.FencedError if the row holds a
// greater generation; otherwise it stores g and takes the next epoch in
// the same transaction. So every map of a newer generation has a greater
// epoch than every map of an older one, and an older generation can never
// open a map again: a superseded process that restarts a worker gets an
// error, not a newer epoch than the rightful owner. An open without a
// fence in its context (tools, tests) takes a new epoch and leaves the
// generation as it is: such a writer is not fenced, and it outranks every
// map opened before it.
//
// Bit 62 puts these timestamps above any wall-clock timestamp in
// microseconds (about 2^50.6 in 2026), so a write made by hand with the
// default timestamp never shadows squall's writes for decades to come:
// state tables belong to squall (see docs/cassandra.md).
const (
	fenceTable = "squall_fences"
	seqBits    = 38
	epochBits  = 62 - seqBits
	maxEpoch   = 1<<epochBits - 1
	maxSeq     = 1<<seqBits - 1
	tsBase     = int64(1) << 62
)

// ErrFenceExhausted is returned when a table's epochs (2^24 openings) or
// a map's sequence numbers (2^38 puts) run out.
var ErrFenceExhausted = errors.New("cassandra: fencing epochs exhausted")

// ensureFences creates the fencing table, or adds the gen column to one
// that an earlier version created without it.
func (s *Session) ensureFences(ctx context.Context) error {
	err := s.CreateTable(ctx, fenceTable,
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (name text PRIMARY KEY, epoch bigint, gen bigint)", s.cfg.Keyspace, fenceTable))
	if err != nil {
		return err
	}
	if ok, err := s.fencesHaveGen(ctx); err != nil || ok {
		return err
	}
	err = s.ddl(ctx, "add column gen to "+s.cfg.Keyspace+"."+fenceTable,
		fmt.Sprintf("ALTER TABLE %s.%s ADD gen bigint", s.cfg.Keyspace, fenceTable))
	if err != nil {
		if ok, _ := s.fencesHaveGen(ctx); ok {
			return nil // another process added it first
		}
	}
	return err
}

// checkFences returns an error matching ErrSchema unless the fencing table
// exists with its gen column.
func (s *Session) checkFences(ctx context.Context) error {
	cols, err := s.columns(ctx, fenceTable)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("%w: fencing table %s.%s does not exist (EnsureTable creates it)", ErrSchema, s.cfg.Keyspace, fenceTable)
	}
	if _, ok := cols["gen"]; !ok {
		return fmt.Errorf("%w: fencing table %s.%s has no column gen bigint: an earlier version created it (EnsureTable adds the column)",
			ErrSchema, s.cfg.Keyspace, fenceTable)
	}
	return nil
}

func (s *Session) fencesHaveGen(ctx context.Context) (bool, error) {
	cols, err := s.columns(ctx, fenceTable)
	_, ok := cols["gen"]
	return ok, err
}

// nextEpoch increments the epoch of name by compare-and-set and returns
// the new value. With a fence (f of a generation above 0) it fails with a
// *state.FencedError if a newer generation opened a map of name before,
// and stores f's generation otherwise. A lightweight transaction whose
// outcome is unknown (a timeout) may have taken an epoch nobody uses; that
// only skips a number.
func (s *Session) nextEpoch(ctx context.Context, name string, f state.Fence) (int64, error) {
	sel := fmt.Sprintf("SELECT epoch, gen FROM %s.%s WHERE name = ?", s.cfg.Keyspace, fenceTable)
	ins := fmt.Sprintf("INSERT INTO %s.%s (name, epoch, gen) VALUES (?, 1, ?) IF NOT EXISTS", s.cfg.Keyspace, fenceTable)
	upd := fmt.Sprintf("UPDATE %s.%s SET epoch = ?, gen = ? WHERE name = ? IF epoch = ?", s.cfg.Keyspace, fenceTable)
	for range 100 {
		var cur, gen int64 // a null gen (no fenced open yet) scans as 0
		err := s.SerialRead(ctx, sel, name).Scan(&cur, &gen)
		switch {
		case err == nil:
		case errors.Is(err, errNotFound):
			cur, gen = 0, 0
		default:
			return 0, Classify(fmt.Errorf("cassandra: read the fencing epoch of %s: %w", name, err))
		}
		if f.Generation > 0 {
			if stored := state.Generation(gen); stored > f.Generation {
				return 0, &state.FencedError{Where: "cassandra: open a map of " + name, Fence: f, Current: stored}
			}
			gen = int64(f.Generation)
		}
		if cur >= maxEpoch {
			return 0, fmt.Errorf("%w: %s has used %d epochs", ErrFenceExhausted, name, cur)
		}
		var applied bool
		m := map[string]any{}
		if cur == 0 {
			applied, err = s.CAS(ctx, ins, name, gen).MapScanCAS(m)
		} else {
			applied, err = s.CAS(ctx, upd, cur+1, gen, name, cur).MapScanCAS(m)
		}
		if err != nil {
			return 0, Classify(fmt.Errorf("cassandra: take a fencing epoch of %s: %w", name, err))
		}
		if applied {
			return cur + 1, nil
		}
		// Another map took this epoch meanwhile: read again.
	}
	return 0, Classify(fmt.Errorf("cassandra: take a fencing epoch of %s: too much contention", name))
}

// fence hands out the write timestamps of one map.
type fence struct {
	epoch int64
	seq   atomic.Int64
}

// next returns the timestamp of the next MultiPut.
func (f *fence) next() (int64, error) {
	n := f.seq.Add(1)
	if n > maxSeq {
		return 0, fmt.Errorf("%w: a map of epoch %d has made %d puts; open a new one", ErrFenceExhausted, f.epoch, maxSeq)
	}
	return tsBase | f.epoch<<seqBits | n, nil
}
