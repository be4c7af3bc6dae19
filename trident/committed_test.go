package trident

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// heldCommit is opaque map state whose Commit of txid hold waits until
// release is closed, after the batch's values were written.
type heldCommit struct {
	*opaque.Map[int64]
	hold    txn.TxID
	written chan<- struct{}
	release <-chan struct{}
}

func (h *heldCommit) Commit(ctx context.Context, txid txn.TxID) error {
	if txid == h.hold {
		select {
		case h.written <- struct{}{}:
		default:
		}
		<-h.release
	}
	return h.Map.Commit(ctx, txid)
}

// holdingCommit returns a factory of opaque memory state whose commit of
// txid 2 waits, after its writes, until release is called; written
// receives a value then (from up to buffer partitions). The test's end
// releases it too, so no task stays blocked.
func holdingCommit(t *testing.T, buffer int) (f StateFactory[int64], written <-chan struct{}, release func()) {
	w, held := make(chan struct{}, buffer), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	t.Cleanup(release)
	backing := MemoryBacking("counts")
	f = func(ctx context.Context, p, n int) (state.MapState[int64], error) {
		m, err := backing(ctx, p, n)
		if err != nil {
			return nil, err
		}
		return &heldCommit{Map: opaque.New[int64](m, state.MapOptions[int64]{}), hold: 2, written: w, release: held}, nil
	}
	return f, w, release
}

// TestReadCommittedSkipsWrittenUncommittedBatch: while batch 2 has
// written its counts but not committed, ReadCommitted returns the counts
// of batch 1; once batch 2 committed, its counts.
func TestReadCommittedSkipsWrittenUncommittedBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, written, release := holdingCommit(t, 2)
		tt := NewTopology("wordcount")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, fixedSource(newFixed(1, sentences...))))
		g := s.Each(Fields{"sentence"}, split, "word").GroupBy("word")
		g.Parallelism(2)
		counts := PersistentAggregate(g, f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		<-written // batch 2 ("the man went to the store …") wrote, not committed,
		<-written // in both partitions

		the := keysOf("the", "man", "cow")
		got, err := ReadCommitted(ctx, r, counts, the...)
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Committed(); c != 1 {
			t.Fatalf("committed = %v while batch 2 is held", c)
		}
		if latest := readCounts(t, f, 2, "the"); latest["the"] != 4 {
			t.Fatalf("batch 2 did not write: latest count of the = %d", latest["the"])
		}
		want := []state.Entry[int64]{{Val: 2, Found: true}, {}, {Val: 1, Found: true}}
		if !slices.Equal(got, want) {
			t.Fatalf("committed values during batch 2's commit = %v, want %v (as of txid 1)", got, want)
		}

		release()
		if err := r.WaitCommitted(ctx, 2); err != nil {
			t.Fatal(err)
		}
		r.Deactivate()
		got, err = ReadCommitted(ctx, r, counts, the...)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Val < 4 || !got[1].Found {
			t.Fatalf("after batch 2 committed: %v", got)
		}
	})
}

func TestReadCommittedNeedsCommittedReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tt := NewTopology("tx")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, fixedSource(newFixed(1, sentences...))))
		counts := PersistentAggregate(s.Each(Fields{"sentence"}, split, "word").GroupBy("word"), TransactionalMemory[int64]("c"), Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		if _, err := ReadCommitted(context.Background(), r, counts, keysOf("the")...); !errors.Is(err, ErrNoCommittedRead) {
			t.Fatalf("ReadCommitted of transactional state = %v", err)
		}
		other := NewTopology("other")
		o := PersistentAggregate(other.NewStream("s", BatchSource(Fields{"word"}, fixedSource(newFixed(1)))).GroupBy("word"),
			OpaqueMemory[int64]("o"), Fields{"word"}, count{}, "count")
		if _, err := ReadCommitted(context.Background(), r, o, keysOf("the")...); !errors.Is(err, ErrInvalid) {
			t.Fatalf("ReadCommitted of another topology's state = %v", err)
		}
	})
}

// fixedSource returns a spout constructor that hands out s.
func fixedSource(s *fixedBatchSpout) func() spout.Batcher {
	return func() spout.Batcher { return s }
}
