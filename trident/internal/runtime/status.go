package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/squallstream/squall/internal/hist"
	"github.com/squallstream/squall/internal/notify"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// Status is shared by the master, the stage tasks and the API's Running:
// the committed txid, the halt, and the counters.
type Status struct {
	owner     coordstore.Fence // this submission's generation of the topology
	committed atomic.Uint64
	halted    atomic.Pointer[error]
	haltOnce  sync.Once
	stopped   chan struct{} // closed by Halt
	rejected  atomic.Uint64

	announced      atomic.Uint64 // batch attempts announced
	replayed       atomic.Uint64 // of them, attempts at a txid tried before (attempt number above 0)
	failedAttempts atomic.Uint64 // failed batch attempts and master actions
	quarantined    atomic.Uint64 // corrupt stored values moved aside
	starts         atomic.Int64  // master starts: more than one after a worker restart
	inFlight       atomic.Int64  // batches in flight, as of the master's last action
	fenced         atomic.Uint64 // writes rejected for a newer owner generation

	mu       sync.Mutex
	failures map[txn.TxID]error // why the latest attempt at a txid failed, until the master takes it
	causes   map[txn.TxID]error // what the master took, until the txid commits (Failure)

	latency       hist.Histogram // batch latencies: announcement of the committed attempt to the end of its commit
	commitLatency hist.Histogram // commit latencies: start of the commit phase (the freeze) to the end of the commit
	commits       notify.Signal  // broadcast on every change of committed
}

// NewStatus returns the status of a submission that owns the topology as
// owner.
func NewStatus(owner coordstore.Fence) *Status {
	return &Status{owner: owner, stopped: make(chan struct{})}
}

// Owner returns the submission's owner generation.
func (s *Status) Owner() coordstore.Fence { return s.owner }

// Committed returns the last committed txid.
func (s *Status) Committed() txn.TxID { return txn.TxID(s.committed.Load()) }

// SetCommitted publishes the last committed txid and wakes the goroutines
// in WaitCommitted.
func (s *Status) SetCommitted(txid txn.TxID) {
	s.mu.Lock()
	for t := range s.causes {
		if t <= txid {
			delete(s.causes, t)
		}
	}
	s.mu.Unlock()
	s.committed.Store(uint64(txid))
	s.commits.Broadcast()
}

// WaitCommitted waits until txid is committed, the topology halts, or ctx
// is done.
func (s *Status) WaitCommitted(ctx context.Context, txid txn.TxID) error {
	for {
		committed := s.commits.Wait() // before the check, so no commit is missed
		if s.Committed() >= txid {
			return nil
		}
		if err := s.Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("trident: waiting for txid %v (committed %v): %w", txid, s.Committed(), ctx.Err())
		case <-committed:
		case <-s.stopped:
		}
	}
}

// Halt stops the topology for good with err: the master starts no batch
// and no committer writes state after it. Only the first error is kept;
// Halt reports whether err was it.
func (s *Status) Halt(err error) bool {
	first := false
	s.haltOnce.Do(func() {
		s.halted.Store(&err)
		close(s.stopped)
		first = true
	})
	return first
}

// Err returns the error that halted the topology, or nil.
func (s *Status) Err() error {
	if p := s.halted.Load(); p != nil {
		return *p
	}
	return nil
}

// isHalted reports whether the topology halted.
func (s *Status) isHalted() bool { return s.halted.Load() != nil }

// Halted is closed when the topology halts for good.
func (s *Status) Halted() <-chan struct{} { return s.stopped }

// AddRejected counts a tuple rejected to the dead letters.
func (s *Status) AddRejected() { s.rejected.Add(1) }

// Rejected returns the number of tuples rejected to the dead letters.
func (s *Status) Rejected() uint64 { return s.rejected.Load() }

// AddQuarantined counts a corrupt stored value moved to the quarantine.
func (s *Status) AddQuarantined() { s.quarantined.Add(1) }

// Quarantined returns the number of quarantined values.
func (s *Status) Quarantined() uint64 { return s.quarantined.Load() }

// FailedAttempts returns the number of failed batch attempts and failed
// master actions.
func (s *Status) FailedAttempts() uint64 { return s.failedAttempts.Load() }

// Announced returns the number of batch attempts announced.
func (s *Status) Announced() uint64 { return s.announced.Load() }

// Replayed returns the number of announced attempts at a txid that was
// tried before (by this process or an earlier one).
func (s *Status) Replayed() uint64 { return s.replayed.Load() }

// BatchLatency summarises the latencies of the committed batches.
func (s *Status) BatchLatency() topology.Latency { return latencyOf(&s.latency) }

// CommitLatency summarises the commit phases of the committed batches.
func (s *Status) CommitLatency() topology.Latency { return latencyOf(&s.commitLatency) }

func latencyOf(h *hist.Histogram) topology.Latency {
	l := h.Summary()
	out := topology.Latency{Count: l.Count, P50: l.P50, P99: l.P99, Max: l.Max, Sum: l.Sum}
	if l.Count == 0 {
		return out
	}
	out.Buckets = make([]topology.LatencyBucket, len(hist.Bounds))
	for i, b := range hist.Bounds {
		out.Buckets[i] = topology.LatencyBucket{Below: b, Count: l.Below[i]}
	}
	return out
}

// recordFailure remembers why a batch failed, for the coordinator's
// attempt-limit error.
func (s *Status) recordFailure(txid txn.TxID, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures == nil {
		s.failures = map[txn.TxID]error{}
	}
	s.failures[txid] = err
}

// takeFailure returns and forgets the recorded cause of txid's failure.
func (s *Status) takeFailure(txid txn.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.failures[txid]
	delete(s.failures, txid)
	if err != nil {
		if s.causes == nil {
			s.causes = map[txn.TxID]error{}
		}
		s.causes[txid] = err
	}
	return err
}

// Failure returns the cause of the latest failed attempt at txid, as the
// master took it, or nil; it is forgotten when txid commits.
func (s *Status) Failure(txid txn.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failures[txid]; err != nil {
		return err
	}
	return s.causes[txid]
}
