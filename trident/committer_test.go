package trident

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// committedLog is an emitter that records the txids it hears committed.
type committedLog struct {
	*spouttest.Emitter
	mu    sync.Mutex
	txids []txn.TxID
}

func (c *committedLog) Committed(_ context.Context, txid txn.TxID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.txids = append(c.txids, txid)
	return nil
}

func (c *committedLog) heard() []txn.TxID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.txids)
}

// TestEmitterHearsCommits: an opaque source's emitter that implements
// spout.Committer hears a txid only after its commit completed: not while
// the batch's state is written but its commit is held, and then once it
// committed.
func TestEmitterHearsCommits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := spouttest.NewSource("p@0")
		src.Append("p@0", "a", "b", "c", "d", "e", "f")
		src.SetMaxBatch(2)
		em := &committedLog{Emitter: src.Emitter()}
		f, written, release := holdingCommit(t, 1)
		tt := NewTopology("committer")
		s := tt.NewStream("records", OpaqueSource(Fields{"partition", "offset", "word"}, src.Lister,
			func(int) spout.Emitter[spouttest.Offsets] { return em }))
		PersistentAggregate(s.GroupBy("word"), f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()

		<-written
		time.Sleep(time.Second) // everything else the runtime would do now
		if got := em.heard(); !slices.Equal(got, []txn.TxID{1}) {
			t.Fatalf("while batch 2's commit is held the emitter heard %v; want [1]", got)
		}
		release()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		r.Deactivate()
		waitEvery(t, time.Minute, time.Millisecond, "commit 3 to be heard", func() bool {
			return slices.Contains(em.heard(), 3)
		})
		got := em.heard()
		for i, txid := range got {
			if txid != txn.TxID(i+1) {
				t.Fatalf("heard %v; want 1, 2, 3, … in order", got)
			}
		}
	})
}
