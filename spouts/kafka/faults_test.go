package kafka_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/testenv"
)

// In-process end-to-end runs under faults of the brokers, on memory state:
// counts per key stay exact.

// TestExactlyOnceLeaderMove moves the leaders of all partitions between
// three kafkatest brokers while the pipeline runs: fetches sent to an old
// leader fail (NOT_LEADER), the batch is replayed, and the spout finds the
// new leader.
func TestExactlyOnceLeaderMove(t *testing.T) {
	const (
		records    = 100_000
		partitions = 8
		nodes      = 3
	)
	b := fakeBroker(t, nodes)
	topic := b.topic(t, partitions)
	want := produceKeyed(t, b.addrs, topic, partitions, records, 100, nil)
	pl := startPipeline(t, pipelineParams{
		Brokers: b.addrs, Topic: topic, DeadLetters: b.topic(t, 1), Keys: 100, SpoutTasks: 2, MaxRecords: 1000,
		FailEvery: 30_011,
	})
	defer pl.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Move every partition's leader to the next node each time a few
	// batches committed, until the counts are complete.
	moves := 0
	var wg sync.WaitGroup
	moverCtx, stopMover := context.WithCancel(ctx)
	wg.Go(func() {
		for round := 1; moverCtx.Err() == nil; round++ {
			if err := pl.running.WaitCommitted(moverCtx, pl.running.Committed()+2); err != nil {
				return
			}
			for p := range int32(partitions) {
				leader := b.cluster.Leader(topic, p)
				if err := b.cluster.MovePartition(topic, p, (leader+1)%nodes); err != nil {
					t.Error(err)
					return
				}
			}
			moves = round
		}
	})
	got := pl.waitTotal(t, ctx, records)
	stopMover()
	wg.Wait()
	checkCounts(t, got, want)
	st := pl.sp.Stats()
	t.Logf("leader moves %d, reconnects %d, failed batches %d", moves, st.Reconnects, pl.failed.Load())
	if moves < 2 || st.Reconnects == 0 {
		t.Fatalf("%d leader moves and %d reconnects: the run did not exercise a leader move", moves, st.Reconnects)
	}
}

// TestExactlyOnceBrokerRestart restarts the real Kafka while the pipeline
// runs: batches fail while it is down and are replayed once it is back.
// It stops a shared service, so it needs SQUALL_SERVICES_EXCLUSIVE.
func TestExactlyOnceBrokerRestart(t *testing.T) {
	b := realBroker(t)
	testenv.RequireExclusive(t)
	const (
		records    = 200_000
		partitions = 8
	)
	topic := b.topic(t, partitions)
	want := produceKeyed(t, b.addrs, topic, partitions, records, 500, nil)
	pl := startPipeline(t, pipelineParams{
		Brokers: b.addrs, Topic: topic, DeadLetters: b.topic(t, 1), Keys: 500, SpoutTasks: 2, MaxRecords: 1000,
	})
	// Clean-ups, not defers: RestartService's clean-up must have brought
	// Kafka back before they run.
	t.Cleanup(func() { pl.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	for {
		n, err := pl.total(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n >= records/4 {
			t.Logf("restarting Kafka at %d of %d records", n, records)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("only %d records counted before the restart", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	testenv.RestartService(t, "kafka")
	got := pl.waitTotal(t, ctx, records)
	checkCounts(t, got, want)
	st := pl.sp.Stats()
	t.Logf("reconnects %d", st.Reconnects)
	if st.Reconnects == 0 {
		t.Fatal("no reconnect: the restart did not reach the spout")
	}
}
