package trident

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

var errReserve = errors.New("upstream reservation refused")

// reservingSpout is a spout.BatchCommitter (Storm's
// ICommitterTridentSpout): its Commit of txid 2 fails the first time, and
// it records the order of its Commit and Ack calls.
type reservingSpout struct {
	*fixedBatchSpout
	mu     sync.Mutex
	calls  []string
	failed bool
}

func (s *reservingSpout) Commit(_ context.Context, a txn.Attempt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, "commit "+a.String())
	if a.TxID == 2 && !s.failed {
		s.failed = true
		return failure.Retryable(errReserve)
	}
	return nil
}

func (s *reservingSpout) Ack(ctx context.Context, txid txn.TxID) error {
	s.mu.Lock()
	s.calls = append(s.calls, "ack "+txid.String())
	s.mu.Unlock()
	return s.fixedBatchSpout.Ack(ctx, txid)
}

// TestBatchCommitterTakesPartInTheCommit: a batch spout that is a
// spout.BatchCommitter is called in each batch's commit phase, before
// the batch's Ack; a failed Commit fails the commit, which is retried
// (Commit called again), and the counts are exact.
func TestBatchCommitterTakesPartInTheCommit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &reservingSpout{fixedBatchSpout: newFixed(1, sentences...)}
		f := OpaqueMemory[int64]("counts")
		tt := NewTopology("batch-committer")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		PersistentAggregate(s.Each(Fields{"sentence"}, split, "word").GroupBy("word"), f, Fields{"word"}, count{}, "count")
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		if got := readCounts(t, f, 1, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts %v, want %v", got, wantCounts())
		}
		src.mu.Lock()
		calls := slices.Clone(src.calls)
		src.mu.Unlock()
		at := func(call string) int {
			i := slices.Index(calls, call)
			if i < 0 {
				t.Fatalf("no %q in %v", call, calls)
			}
			return i
		}
		if !(at("commit 1:0") < at("ack 1") && at("commit 2:0") < at("commit 2:1") && at("commit 2:1") < at("ack 2")) {
			t.Fatalf("calls %v: want commit 1:0 before ack 1, and a failed commit 2:0, then commit 2:1, before ack 2", calls)
		}
		if r.FailedAttempts() == 0 {
			t.Fatal("the failed Commit did not fail an attempt")
		}
	})
}
