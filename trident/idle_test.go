package trident

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// feed is a batch spout that emits the records added since its last
// batch and remembers which txid carried each.
type feed struct {
	mu      sync.Mutex
	waiting []string
	carried map[string]txn.TxID
}

func newFeed() *feed { return &feed{carried: map[string]txn.TxID{}} }

func (f *feed) add(r string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waiting = append(f.waiting, r)
}

// txidOf returns the txid of the batch that carried r, or 0.
func (f *feed) txidOf(r string) txn.TxID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.carried[r]
}

func (f *feed) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.waiting {
		c.Emit(r)
		f.carried[r] = a.TxID
	}
	f.waiting = nil
	return nil
}

func (f *feed) Ack(context.Context, txn.TxID) error { return nil }

// feedTopology counts the records of f in opaque memory state.
func feedTopology(name string, f *feed) *Topology {
	tt := NewTopology(name)
	PersistentAggregate(tt.NewStream("records", BatchSource(Fields{"record"}, func() spout.Batcher { return f })).GroupBy("record"),
		OpaqueMemory[int64]("counts"), Fields{"record"}, count{}, "count")
	return tt
}

// TestIdleTopologyCommitsOncePerIdleInterval: a topology whose source has
// nothing commits at most one batch per IdleBatchInterval (1s by
// default) instead of one per BatchEmitInterval (50ms): over 10 s of
// virtual time, about 10 commits rather than 200, which is what it still
// commits with the idle interval set to BatchEmitInterval.
func TestIdleTopologyCommitsOncePerIdleInterval(t *testing.T) {
	commits := func(t *testing.T, cfg Config) txn.TxID {
		var n txn.TxID
		synctest.Test(t, func(t *testing.T) {
			r := submit(t, feedTopology("idle", newFeed()), cfg)
			time.Sleep(10 * time.Second)
			n = r.Committed()
		})
		return n
	}
	idle := commits(t, Config{})
	busy := commits(t, Config{IdleBatchInterval: 50 * time.Millisecond})
	t.Logf("commits in 10s: %d with the default idle interval, %d without", idle, busy)
	if idle < 9 || idle > 11 {
		t.Errorf("an idle topology committed %d batches in 10s, want about one per second (9 to 11)", idle)
	}
	if busy < 150 {
		t.Errorf("with IdleBatchInterval = BatchEmitInterval, %d batches in 10s, want about 200", busy)
	}
}

// TestRecordAfterIdlenessCommittedWithinIdleInterval: after a quiet
// spell, a record is committed within IdleBatchInterval of its arrival;
// the batch that carried it ends the idleness, so the next record is
// committed within a few BatchEmitIntervals.
func TestRecordAfterIdlenessCommittedWithinIdleInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		const idle = 5 * time.Second
		r := submit(t, feedTopology("idle-record", f), Config{IdleBatchInterval: idle})
		ctx := context.Background()
		time.Sleep(time.Minute + 1234*time.Millisecond) // an odd phase against the idle batches
		committed := func(rec string) time.Duration {
			t.Helper()
			start := time.Now()
			f.add(rec)
			for f.txidOf(rec) == 0 {
				time.Sleep(time.Millisecond)
			}
			if err := r.WaitCommitted(ctx, f.txidOf(rec)); err != nil {
				t.Fatal(err)
			}
			return time.Since(start)
		}
		if took := committed("a"); took > idle {
			t.Errorf("a record arriving while idle was committed after %v, want at most the idle interval %v", took, idle)
		}
		if took := committed("b"); took > 3*50*time.Millisecond {
			t.Errorf("a record right after a busy batch was committed after %v, want within a few BatchEmitIntervals", took)
		}
	})
}

// TestDRPCWhileIdleAnsweredWithoutIdleWait: a DRPC request to an idle
// topology starts a batch at the next BatchEmitInterval tick, not after
// the idle interval.
func TestDRPCWhileIdleAnsweredWithoutIdleWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		tt := NewTopology("drpc-idle")
		echo := tt.NewDRPCStream("echo", server).Each(Fields{"args"}, FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
			out.Emit(strings.ToUpper(t.String("args")))
			return nil
		}), "upper")
		ReturnResults(echo, "echo", "upper")
		r := submit(t, tt, Config{IdleBatchInterval: time.Hour})
		time.Sleep(10 * time.Second)
		if n := r.Committed(); n > 2 {
			t.Fatalf("%d batches committed in 10s with an idle interval of an hour", n)
		}
		start := time.Now()
		res, err := server.Execute(context.Background(), "echo", "hi", time.Minute)
		if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "HI" {
			t.Fatalf("echo(hi) = %+v, %v", res, err)
		}
		if took := time.Since(start); took > 2*50*time.Millisecond {
			t.Errorf("a DRPC request to an idle topology was answered after %v, want within two BatchEmitIntervals", took)
		}
	})
}
