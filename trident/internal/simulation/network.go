package simulation

import (
	"math/rand/v2"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// node numbers a participant: the master, the acker, then the source
// tasks, then the counting tasks.
type node int

const (
	masterNode node = 0
	ackerNode  node = 1
)

// kind is what a message carries.
type kind uint8

const (
	mBatch   kind = iota + 1 // master -> source task: a batch to emit (tracked)
	mFreeze                  // master -> source task: freeze a batch's metadata (tracked)
	mCommit                  // master -> counting task: write a batch (tracked)
	mSuccess                 // master -> every task: a txid committed
	mData                    // source task -> counting task: a word of a batch
	mReport                  // source task -> counting task: how many words it sent (tracked)
	mInit                    // master -> acker: a tree's root and the XOR of its first edges
	mAck                     // task -> acker: an acked tuple's edge XOR its children's
	mFail                    // task -> acker: a tuple of the tree failed
	mOutcome                 // acker -> master: a tree completed, failed or timed out
)

var kindNames = [...]string{mBatch: "batch", mFreeze: "freeze", mCommit: "commit", mSuccess: "success",
	mData: "data", mReport: "report", mInit: "init", mAck: "ack", mFail: "fail", mOutcome: "outcome"}

func (k kind) String() string { return kindNames[k] }

// tuple is a tracked tuple: its tree's root and its edge id.
type tuple struct {
	root acker.RootID
	edge uint64
}

// message is one message between two nodes; which fields are set depends
// on its kind.
type message struct {
	kind    kind
	attempt txn.Attempt
	batch   spout.Batch // mBatch
	word    string      // mData
	count   int         // mReport
	txid    txn.TxID    // mSuccess
	tup     tuple       // tracked kinds; root and edge XOR for acker messages
	outcome acker.Outcome
}

// network holds the messages in flight: a FIFO queue per ordered pair of
// nodes, as between two executors of one worker. Delivery picks a random
// non-empty link, so messages on different links arrive in any order.
type network struct {
	links [][][]message // [from][to]
	sent  int
}

func newNetwork(nodes int) *network {
	n := &network{links: make([][][]message, nodes)}
	for i := range n.links {
		n.links[i] = make([][]message, nodes)
	}
	return n
}

func (n *network) send(from, to node, m message) {
	n.links[from][to] = append(n.links[from][to], m)
	n.sent++
}

// pick returns a random non-empty link, or false if nothing is in flight.
// Links are scanned in a fixed order, so the pick depends on rng alone.
func (n *network) pick(rng *rand.Rand) (from, to node, ok bool) {
	busy := 0
	for _, row := range n.links {
		for _, q := range row {
			if len(q) > 0 {
				busy++
			}
		}
	}
	if busy == 0 {
		return 0, 0, false
	}
	k := rng.IntN(busy)
	for f, row := range n.links {
		for t, q := range row {
			if len(q) == 0 {
				continue
			}
			if k == 0 {
				return node(f), node(t), true
			}
			k--
		}
	}
	panic("unreachable")
}

// pop removes and returns the oldest message on a link.
func (n *network) pop(from, to node) message {
	q := n.links[from][to]
	m := q[0]
	q[0] = message{}
	n.links[from][to] = q[1:]
	return m
}

// clear loses every message in flight (a crash).
func (n *network) clear() {
	for _, row := range n.links {
		for t := range row {
			row[t] = nil
		}
	}
}
