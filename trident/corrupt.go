package trident

import (
	"context"
	"fmt"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// CorruptPolicy says what happens when a persistent state holds a value
// that cannot be decoded (state.ErrCorrupt).
type CorruptPolicy uint8

const (
	// CorruptHalt (the default) fails the batch with the reported
	// state.DecodeError, which names the map, the key and the cause; the
	// batch is replayed with backoff, and after the attempt limit
	// (Config.MaxAttempts, or CorruptAttempts when that is zero) the
	// topology halts with an error matching ErrAttemptLimit that wraps the
	// DecodeError. Nothing is overwritten: an operator repairs or removes
	// the value and restarts.
	CorruptHalt CorruptPolicy = iota
	// CorruptQuarantine copies the stored bytes to Config.Quarantine,
	// counts them (Running.Quarantined), logs them, and treats the key as
	// absent: the batch goes on and its write replaces the value. The map
	// states of package state's opaque, transactional and
	// non-transactional maps support it (state.CorruptHandling); a
	// persistent state that does not makes Submit's topology fail to
	// start.
	CorruptQuarantine
)

// String names the policy.
func (p CorruptPolicy) String() string {
	switch p {
	case CorruptHalt:
		return "halt"
	case CorruptQuarantine:
		return "quarantine"
	}
	return fmt.Sprintf("CorruptPolicy(%d)", uint8(p))
}

// CorruptAttempts is the number of failed attempts of a batch on a corrupt
// stored value after which CorruptHalt halts the topology when
// Config.MaxAttempts is zero.
const CorruptAttempts = 3

// Quarantined is a stored value that could not be decoded, moved aside
// under CorruptQuarantine.
type Quarantined struct {
	Topology  string
	Component string      // the stage whose state held it
	Attempt   txn.Attempt // the batch that met it
	Map       string      // the state's name (state.MapOptions.Name or the backing map's)
	Key       state.Key
	Raw       []byte // the stored bytes that could not be decoded
	Err       error  // why they could not be decoded
}

// Quarantine receives corrupt stored values. Put is called from the task
// that met the value, in the batch's commit phase; a replayed batch may
// put the same value again, so Put must tolerate duplicates. An error
// from Put fails the batch (it is replayed; the value stays in place).
type Quarantine interface {
	Put(ctx context.Context, q Quarantined) error
}

// QuarantineFunc adapts a function to Quarantine.
type QuarantineFunc func(ctx context.Context, q Quarantined) error

// Put calls f.
func (f QuarantineFunc) Put(ctx context.Context, q Quarantined) error { return f(ctx, q) }

// MemoryQuarantine keeps quarantined values in memory, for tests and demos.
type MemoryQuarantine struct{ values memoryList[Quarantined] }

// Put keeps q.
func (m *MemoryQuarantine) Put(_ context.Context, q Quarantined) error {
	m.values.add(q)
	return nil
}

// Values returns the kept values.
func (m *MemoryQuarantine) Values() []Quarantined { return m.values.all() }

// Quarantined returns the number of corrupt stored values moved to the
// quarantine (replays included).
func (r *Running) Quarantined() uint64 { return r.status.Quarantined() }

// FailedAttempts returns the number of failed batch attempts and failed
// master actions (store or spout calls) since the topology started. Logs
// show only the changes of the stream's health; this counts everything.
func (r *Running) FailedAttempts() uint64 { return r.status.FailedAttempts() }
