package topology

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/squallstream/squall/transport"
)

// A peer worker that restarts loses what it held: the tuples in its
// executors and the trees of its ackers. The trees of this worker's
// spouts that went through it can then only fail, and without help they
// fail by timing out (one to three message timeouts). When a transport
// client reconnects and finds the peer restarted (another incarnation),
// or knows that a write was lost, the network records a peer loss; every
// spout executor of the worker sees it at its next round and fails at
// once every tree it emitted before the loss, so their sources replay
// them within a round trip of the reconnection.
//
// Which trees went through the peer is not known here: a tree's tuples
// can reach the peer from any worker, and ackers keep no more than an
// XOR per tree. So every tree emitted before the loss is failed,
// including trees that never touched the peer. A replay is always safe
// (that is the tree's contract: it fails and is replayed, or completes),
// it only costs the work of the trees failed needlessly. Trident's batch
// trees reach every worker of the topology anyway, so for Trident the
// set is the same. A reconnection to the same incarnation with no failed
// write fails nothing: the peer still holds, and will ack, what it read.
// What the transport cannot see (a write that succeeded but was never
// read by a peer that survived) is left to the message timeout.

// peerLoss is one recorded loss of a peer's state or messages.
type peerLoss struct {
	seq  uint64    // 1 for the first loss, +1 per loss
	at   time.Time // when it was recorded (Config.Clock)
	peer WorkerID
}

// peerLosses is the losses a worker recorded: the network writes it, the
// spout executors read the latest with one atomic load per round.
type peerLosses struct {
	mu     sync.Mutex // serializes record
	latest atomic.Pointer[peerLoss]
	failed atomic.Uint64 // trees failed because of a loss
}

// record notes a loss of peer at now and returns its sequence number.
func (l *peerLosses) record(peer WorkerID, now time.Time) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	seq := uint64(1)
	if p := l.latest.Load(); p != nil {
		seq = p.seq + 1
	}
	l.latest.Store(&peerLoss{seq: seq, at: now, peer: peer})
	return seq
}

// seq returns the latest loss's sequence number, 0 for none; nil-safe.
func (l *peerLosses) seq() uint64 {
	if l == nil {
		return 0
	}
	if p := l.latest.Load(); p != nil {
		return p.seq
	}
	return 0
}

// since returns the latest loss if it is newer than seen; nil-safe.
func (l *peerLosses) since(seen uint64) *peerLoss {
	if l == nil {
		return nil
	}
	if p := l.latest.Load(); p != nil && p.seq != seen {
		return p
	}
	return nil
}

// reconnected is a peer client's Reconnected hook: it records a loss
// when the peer restarted or a write to it failed, then calls the hook
// the WorkerSpec's client template had, if any.
func (n *network) reconnected(id WorkerID, next func(transport.Reconnect)) func(transport.Reconnect) {
	return func(rc transport.Reconnect) {
		if rc.Lossy() {
			seq := n.losses.record(id, n.r.plan.cfg.Clock.Now())
			n.log.Warn("peer restarted or messages to it were lost; failing the pending trees of this worker's spouts",
				"peer", id, "restarted", rc.Restarted(), "lost", rc.Lost, "incarnation", rc.Incarnation,
				"previous", rc.Previous, "loss", seq)
		}
		if next != nil {
			next(rc)
		}
	}
}

// failLost fails every tree the executor's tasks emitted before the
// latest peer loss it has not acted on yet (see the top of peerloss.go).
func (s *spoutExecutor) failLost() {
	l := s.losses.since(s.seenLoss)
	if l == nil {
		return
	}
	s.seenLoss = l.seq
	var n uint64
	for _, t := range s.tasks {
		t.pending.removeIf(func(p *pendingTree) bool {
			return !s.emittedAt(*p).After(l.at)
		}, func(p pendingTree) {
			delete(s.resets, p.root)
			s.current = t.id
			t.cnt.failed++
			n++
			t.spout.Fail(p.msgID)
		})
	}
	if n > 0 {
		s.losses.failed.Add(n)
		s.w.log.Warn("failed the trees pending when a peer was lost", "component", s.plan.comp.id,
			"peer", l.peer, "trees", n, "loss", l.seq)
	}
}

// PeerLossStats are a cluster-mode worker's reactions to lost peers.
type PeerLossStats struct {
	// Losses counts the reconnections to a peer that had restarted, or
	// after a write to it failed.
	Losses uint64
	// TreesFailed counts the pending trees of this worker's spouts failed
	// at once because of them (also counted in ComponentStats.Failed).
	TreesFailed uint64
}

// PeerLosses returns a cluster-mode worker's PeerLossStats; zero for a
// topology submitted to a LocalCluster.
func (r *Running) PeerLosses() PeerLossStats {
	if r.net == nil {
		return PeerLossStats{}
	}
	return PeerLossStats{Losses: r.net.losses.seq(), TreesFailed: r.net.losses.failed.Load()}
}
