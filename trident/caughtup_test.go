package trident

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// memLog is a partitioned log in memory: a source whose Lister is a
// spout.EndMarker and whose metadata is a spout.Positioned.
type memLog struct {
	mu      sync.Mutex
	records map[spout.Partition][]string
	marks   int // EndMark calls
}

// logMeta is a batch of one partition: offsets [First, Next).
type logMeta struct{ First, Next int64 }

func (m logMeta) End() int64 { return m.Next }

func (l *memLog) append(p spout.Partition, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range n {
		l.records[p] = append(l.records[p], string(p))
	}
}

func (l *memLog) Partitions(context.Context) ([]spout.Partition, error) {
	return []spout.Partition{"p0", "p1"}, nil
}

func (l *memLog) EndMark(context.Context) (map[spout.Partition]int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.marks++
	out := map[spout.Partition]int64{}
	for p, rs := range l.records {
		if len(rs) > 0 {
			out[p] = int64(len(rs))
		}
	}
	return out, nil
}

// logEmitter reads at most 3 records of a partition per batch.
type logEmitter struct{ l *memLog }

func (e logEmitter) Emit(_ context.Context, _ txn.Attempt, p spout.Partition, prev *logMeta, c spout.Collector) (logMeta, error) {
	e.l.mu.Lock()
	defer e.l.mu.Unlock()
	m := logMeta{}
	if prev != nil {
		m.First = prev.Next
	}
	m.Next = min(m.First+3, int64(len(e.l.records[p])))
	for _, r := range e.l.records[p][m.First:m.Next] {
		c.Emit(r)
	}
	return m, nil
}

func (e logEmitter) Reemit(_ context.Context, _ txn.Attempt, p spout.Partition, m logMeta, c spout.Collector) error {
	e.l.mu.Lock()
	defer e.l.mu.Unlock()
	for _, r := range e.l.records[p][m.First:m.Next] {
		c.Emit(r)
	}
	return nil
}

// logCounts counts the records of l's opaque source per partition.
func logCounts(l *memLog) (*Topology, *State[state.MapState[int64]]) {
	tt := NewTopology("caught-up")
	src := OpaqueSource[logMeta](Fields{"p"}, func() spout.Lister { return l }, func(int) spout.Emitter[logMeta] { return logEmitter{l} })
	st := PersistentAggregate(tt.NewStream("log", src).GroupBy("p"), OpaqueMemory[int64]("log-counts"), Fields{"p"}, count{}, "count")
	return tt, st
}

// TestWaitCaughtUpReturnsOnceEverythingAvailableCommitted: with records
// in both partitions (more than one batch's worth), WaitCaughtUp returns
// once every record available at the call is counted in committed state,
// and not before; records appended later are caught up by a later call.
func TestWaitCaughtUpReturnsOnceEverythingAvailableCommitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &memLog{records: map[spout.Partition][]string{}}
		l.append("p0", 10)
		l.append("p1", 4)
		tt, st := logCounts(l)
		r := submit(t, tt, Config{MaxBatchesInFlight: 3})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		check := func(want0, want1 int64) {
			t.Helper()
			got, err := ReadCommitted(ctx, r, st, keysOf("p0", "p1")...)
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Val != want0 || got[1].Val != want1 {
				t.Fatalf("committed counts %d, %d after WaitCaughtUp; want %d, %d", got[0].Val, got[1].Val, want0, want1)
			}
		}
		if err := r.WaitCaughtUp(ctx); err != nil {
			t.Fatal(err)
		}
		check(10, 4)
		l.append("p0", 5)
		l.append("p1", 1)
		if err := r.WaitCaughtUp(ctx); err != nil {
			t.Fatal(err)
		}
		check(15, 5)
		// Nothing new: it returns without waiting for a commit.
		before := r.Committed()
		if err := r.WaitCaughtUp(ctx); err != nil || r.Committed() != before {
			t.Fatalf("WaitCaughtUp with nothing new = %v, committed %d -> %d", err, before, r.Committed())
		}
	})
}

// TestWaitCaughtUpEndsWithContext: while the topology is inactive,
// nothing commits, so WaitCaughtUp waits until ctx is done.
func TestWaitCaughtUpEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &memLog{records: map[spout.Partition][]string{}}
		l.append("p0", 1)
		tt, _ := logCounts(l)
		cfg := Config{}
		cfg.Topology.StartInactive = true
		r := submit(t, tt, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.WaitCaughtUp(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("WaitCaughtUp of an inactive topology = %v, want the context's deadline", err)
		}
	})
}

// TestWaitCaughtUpNamesSourcesThatCannotTell: a BatchSource (and a
// partitioned source whose Lister is not an EndMarker) cannot tell where
// it ends: WaitCaughtUp fails at once naming the streams; a DRPC stream
// is left out.
func TestWaitCaughtUpNamesSourcesThatCannotTell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &memLog{records: map[spout.Partition][]string{}}
		tt, _ := logCounts(l)
		tt.NewStream("words", BatchSource(Fields{"w"}, func() spout.Batcher { return newFixed(1, "a") })).Filter(FilterFunc(func(context.Context, Tuple) (bool, error) { return true, nil }))
		plain := spout.ListerFunc(func(context.Context) ([]spout.Partition, error) { return []spout.Partition{"p0"}, nil })
		tt.NewStream("plain", OpaqueSource[logMeta](Fields{"p"}, func() spout.Lister { return plain }, func(int) spout.Emitter[logMeta] { return logEmitter{l} })).
			Filter(FilterFunc(func(context.Context, Tuple) (bool, error) { return true, nil }))
		server := drpc.NewServer(drpc.Config{})
		ReturnResults(tt.NewDRPCStream("echo", server), "echo", "args")
		r := submit(t, tt, Config{})
		err := r.WaitCaughtUp(context.Background())
		if !errors.Is(err, ErrNoEndMark) || !strings.Contains(err.Error(), `"words"`) || strings.Contains(err.Error(), "echo") || strings.Contains(err.Error(), `"log"`) {
			t.Fatalf("WaitCaughtUp = %v, want ErrNoEndMark naming stream words only", err)
		}
		if strings.Contains(err.Error(), `"plain"`) {
			t.Fatalf("the BatchSource is reported before any Lister is asked: %v", err)
		}
	})
}
