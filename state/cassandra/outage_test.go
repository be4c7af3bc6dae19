package cassandra_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
)

// pauseAt is a backing map that, at the n-th MultiPut of the maps sharing
// its counter, signals reached and waits for resume before writing: the
// test stops Cassandra in between, so that write fails in the middle of a
// batch whose other partition may already have written.
type pauseAt struct {
	state.BackingMap[[]byte]
	puts    *atomic.Int64
	n       int64
	reached chan<- struct{}
	resume  <-chan struct{}
	result  chan<- error // what the paused write returned
}

func (p pauseAt) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	if p.puts.Add(1) == p.n {
		p.reached <- struct{}{}
		select {
		case <-p.resume:
		case <-ctx.Done():
			return ctx.Err()
		}
		err := p.BackingMap.MultiPut(ctx, keys, vals)
		p.result <- err
		return err
	}
	return p.BackingMap.MultiPut(ctx, keys, vals)
}

// TestCassandraOutageMidBatch stops Cassandra while the pipeline is in the
// middle of a batch's state writes (state, coordination store and spout
// metadata all fail while it is down) and starts it again: batches are
// replayed, and the final counts of the opaque and the transactional table
// equal the oracle exactly.
func TestCassandraOutageMidBatch(t *testing.T) {
	testenv.RequireExclusive(t)
	s := cassandratest.Session(t)
	ctx := t.Context()
	tabs := newPipelineTables(t, s)
	reached, resume, result := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	open := func() { once.Do(func() { close(resume) }) }
	t.Cleanup(open)
	puts := new(atomic.Int64)
	r := startPipeline(t, s, tabs, func(f string, _ int, b state.BackingMap[[]byte]) state.BackingMap[[]byte] {
		if f != "op" {
			return b
		}
		return pauseAt{BackingMap: b, puts: puts, n: 7, reached: reached, resume: resume, result: result}
	})
	defer r.stop(t) // after the clean-up of StopService has started Cassandra again
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	testenv.StopService(t, "cassandra")
	open()
	// The paused write ran while Cassandra was down: it must have failed,
	// retryably, so the batch is replayed.
	if err := <-result; err == nil || !failure.IsRetryable(err) {
		t.Fatalf("the write while Cassandra was stopped returned %v, want a retryable error", err)
	} else {
		t.Logf("stopped Cassandra in the middle of a batch (committed %v); its write failed: %v", r.running.Committed(), err)
	}
	testenv.StartService(t, "cassandra")
	finishPipeline(t, r, tabs)
}
