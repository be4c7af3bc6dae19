package cassandra

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
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
//   - a map opened later (a restarted worker) always wins over a map opened
//     earlier (a worker presumed dead that comes back): its late writes
//     land under the newer ones and are never read;
//   - within one map a later MultiPut wins over an earlier one even when
//     the earlier one arrives later (a write that timed out on the client
//     and was applied by the server afterwards, a retry of a replay).
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

func (s *Session) ensureFences(ctx context.Context) error {
	return s.CreateTable(ctx, fenceTable,
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s.%s (name text PRIMARY KEY, epoch bigint)", s.cfg.Keyspace, fenceTable))
}

// nextEpoch increments the epoch of name by compare-and-set and returns
// the new value. A lightweight transaction whose outcome is unknown (a
// timeout) may have taken an epoch nobody uses; that only skips a number.
func (s *Session) nextEpoch(ctx context.Context, name string) (int64, error) {
	sel := fmt.Sprintf("SELECT epoch FROM %s.%s WHERE name = ?", s.cfg.Keyspace, fenceTable)
	ins := fmt.Sprintf("INSERT INTO %s.%s (name, epoch) VALUES (?, 1) IF NOT EXISTS", s.cfg.Keyspace, fenceTable)
	upd := fmt.Sprintf("UPDATE %s.%s SET epoch = ? WHERE name = ? IF epoch = ?", s.cfg.Keyspace, fenceTable)
	for range 100 {
		var cur int64
		err := s.SerialRead(ctx, sel, name).Scan(&cur)
		switch {
		case err == nil:
		case errors.Is(err, errNotFound):
			cur = 0
		default:
			return 0, Classify(fmt.Errorf("cassandra: read the fencing epoch of %s: %w", name, err))
		}
		if cur >= maxEpoch {
			return 0, fmt.Errorf("%w: %s has used %d epochs", ErrFenceExhausted, name, cur)
		}
		var applied bool
		m := map[string]any{}
		if cur == 0 {
			applied, err = s.CAS(ctx, ins, name).MapScanCAS(m)
		} else {
			applied, err = s.CAS(ctx, upd, cur+1, name, cur).MapScanCAS(m)
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
