package kafka

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/metadata"

	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/spouts/kafka/kafkatest"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

var epoch = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

// TestBackoffWaitsOnTheConfiguredClock: the reconnect pause is timed by
// the spout's clock: a request after a failure waits until the manual
// clock has passed the backoff, however much real time passes.
func TestBackoffWaitsOnTheConfiguredClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(epoch)
		b := newBackoff(clk, 100*time.Millisecond, 5*time.Second)
		if d := b.fail(); d != 100*time.Millisecond {
			t.Fatalf("first pause %v, want 100ms", d)
		}
		if d := b.fail(); d != 200*time.Millisecond {
			t.Fatalf("second pause %v, want 200ms", d)
		}
		var waited atomic.Bool
		go func() {
			if err := b.wait(context.Background()); err != nil {
				t.Errorf("wait: %v", err)
			}
			waited.Store(true)
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		if waited.Load() {
			t.Fatal("the pause ended while the manual clock stood still")
		}
		clk.Advance(199 * time.Millisecond)
		synctest.Wait()
		if waited.Load() {
			t.Fatal("the pause ended before the manual clock passed it")
		}
		clk.Advance(time.Millisecond)
		synctest.Wait()
		if !waited.Load() {
			t.Fatal("the pause did not end when the manual clock passed it")
		}
		b.succeed()
		if d := b.fail(); d != 100*time.Millisecond {
			t.Fatalf("pause after a success %v, want 100ms again", d)
		}
	})
}

// countingTransport counts the metadata requests that reach it.
type countingTransport struct {
	kafkago.RoundTripper
	metadata atomic.Int64
}

func (c *countingTransport) RoundTrip(ctx context.Context, addr net.Addr, req protocol.Message) (protocol.Message, error) {
	if _, ok := req.(*metadata.Request); ok {
		c.metadata.Add(1)
	}
	return c.RoundTripper.RoundTrip(ctx, addr, req)
}

// TestListerRefreshesOnTheConfiguredClock: the partition list is cached
// for RefreshInterval/2 of the spout's clock. With an interval of 2ns any
// real time between two calls would expire it; the manual clock keeps it
// until advanced.
func TestListerRefreshesOnTheConfiguredClock(t *testing.T) {
	broker, err := kafkatest.Start(kafkatest.Config{Topics: []string{"events"}, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	clk := clock.NewManual(epoch)
	ctx := context.Background()
	s, err := New(ctx, Config{Brokers: broker.Addrs(), Topics: []string{"events"}, Topology: "clock",
		RefreshInterval: 2 * time.Nanosecond, MirrorInterval: -1, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	counting := &countingTransport{RoundTripper: s.client.Transport}
	s.client.Transport = counting
	list := func() []spout.Partition {
		t.Helper()
		ps, err := s.Partitions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	if ps := list(); len(ps) != 2 || counting.metadata.Load() != 1 {
		t.Fatalf("first list %v after %d requests; want 2 partitions after 1", ps, counting.metadata.Load())
	}
	list()
	list()
	if n := counting.metadata.Load(); n != 1 {
		t.Fatalf("%d metadata requests while the manual clock stood still; want the cached list", n)
	}
	clk.Advance(time.Nanosecond)
	list()
	if n := counting.metadata.Load(); n != 2 {
		t.Fatalf("%d metadata requests after the manual clock passed RefreshInterval/2; want 2", n)
	}
}

// writes records a mirror's writes.
type writes struct {
	mu    sync.Mutex
	got   []map[topicPartition]mirrorPos
	fails int // the next writes that fail
}

func (w *writes) write(_ context.Context, batch map[topicPartition]mirrorPos) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fails > 0 {
		w.fails--
		return errors.New("group has live members")
	}
	w.got = append(w.got, maps.Clone(batch))
	return nil
}

func (w *writes) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.got)
}

func (w *writes) last() map[topicPartition]mirrorPos {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got[len(w.got)-1]
}

func (w *writes) failNext(n int) {
	w.mu.Lock()
	w.fails = n
	w.mu.Unlock()
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestMirrorWritesOnCommitAtMostOncePerInterval: the mirror writes when
// positions are noted (a txid committed), never more than once per
// MirrorInterval of the spout's clock, and never loses the last positions:
// commits within the interval are written together when it ends, and at
// stop.
func TestMirrorWritesOnCommitAtMostOncePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(epoch)
		var w writes
		const interval = time.Second
		m := newMirror(mirrorConfig{clock: clk, interval: interval, log: quiet(), group: "g", write: w.write})
		var stopOnce sync.Once
		stop := func() { stopOnce.Do(m.stop) }
		defer stop()
		p0, p1 := topicPartition{"events", 0}, topicPartition{"events", 1}
		check := func(when string, n int, want map[topicPartition]mirrorPos) {
			t.Helper()
			synctest.Wait()
			if w.count() != n {
				t.Fatalf("%s: %d writes, want %d", when, w.count(), n)
			}
			if want != nil && !maps.Equal(w.last(), want) {
				t.Fatalf("%s: wrote %v, want %v", when, w.last(), want)
			}
		}

		time.Sleep(time.Hour)
		check("nothing committed", 0, nil)
		m.note(p0, 10, 1)
		check("first commit", 1, map[topicPartition]mirrorPos{p0: {10, 1}})

		m.note(p0, 20, 2)
		m.note(p1, 5, 2)
		m.note(p0, 30, 3)
		time.Sleep(time.Hour) // real time: the interval is the manual clock's
		check("commits within the interval", 1, nil)
		clk.Advance(interval - time.Nanosecond)
		check("just before the interval ends", 1, nil)
		clk.Advance(time.Nanosecond)
		check("the interval ended", 2, map[topicPartition]mirrorPos{p0: {30, 3}, p1: {5, 2}})

		clk.Advance(10 * interval)
		check("a quiet spell", 2, nil)
		m.note(p1, 6, 4)
		check("a commit after a quiet spell", 3, map[topicPartition]mirrorPos{p1: {6, 4}})
		m.note(p0, 2, 1) // an old txid (a repeated report) does not go back
		m.note(p0, 40, 5)
		m.note(p0, 35, 4)
		stop()
		check("stop", 4, map[topicPartition]mirrorPos{p0: {40, 5}})
	})
}

// TestMirrorRetriesAFailedWrite: a failed write is retried an interval
// later with the positions it had, or newer ones.
func TestMirrorRetriesAFailedWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewManual(epoch)
		var w writes
		m := newMirror(mirrorConfig{clock: clk, interval: time.Second, log: quiet(), group: "g", write: w.write})
		defer m.stop()
		p0, p1 := topicPartition{"events", 0}, topicPartition{"events", 1}
		w.failNext(2)
		m.note(p0, 10, 1)
		m.note(p1, 7, 1)
		synctest.Wait()
		if w.count() != 0 {
			t.Fatal("a failed write was recorded")
		}
		clk.Advance(time.Second) // the retry fails too
		synctest.Wait()
		m.note(p0, 20, 2)
		clk.Advance(time.Second)
		synctest.Wait()
		want := map[topicPartition]mirrorPos{p0: {20, 2}, p1: {7, 1}}
		if w.count() != 1 || !maps.Equal(w.last(), want) {
			t.Fatalf("after two failures: writes %v, want one of %v", w.got, want)
		}
		clk.Advance(time.Hour)
		synctest.Wait()
		if w.count() != 1 {
			t.Fatalf("%d writes with nothing new to write", w.count())
		}
	})
}

// TestEmitterMirrorsTheEndsOfCommittedBatches: Committed(txid) hands the
// mirror, for each partition, the end of its latest batch up to txid; a
// replay replaces the batches from its txid on; Refresh forgets the
// partitions the task lost.
func TestEmitterMirrorsTheEndsOfCommittedBatches(t *testing.T) {
	m := &mirror{kick: make(chan struct{}, 1), pending: map[topicPartition]mirrorPos{}}
	s := &Spout{mirror: m}
	e := s.newEmitter(0).(*emitter)
	ctx := context.Background()
	p0, p1 := spout.Partition("events@0"), spout.Partition("events@1")
	tp0, tp1 := topicPartition{"events", 0}, topicPartition{"events", 1}
	take := func() map[topicPartition]mirrorPos {
		got := m.pending
		m.pending = map[topicPartition]mirrorPos{}
		return got
	}
	committed := func(txid txn.TxID, want map[topicPartition]mirrorPos) {
		t.Helper()
		if err := e.Committed(ctx, txid); err != nil {
			t.Fatal(err)
		}
		if got := take(); !maps.Equal(got, want) {
			t.Fatalf("Committed(%d): noted %v, want %v", txid, got, want)
		}
	}
	e.noteEnd(p0, 1, 10)
	e.noteEnd(p1, 1, 3)
	e.noteEnd(p0, 2, 20)
	e.noteEnd(p0, 3, 30)
	committed(2, map[topicPartition]mirrorPos{tp0: {20, 2}, tp1: {3, 1}})
	committed(2, map[topicPartition]mirrorPos{}) // a repeated report: nothing new

	e.noteEnd(p0, 4, 40)
	e.noteEnd(p0, 3, 25) // a replay of 3 (opaque: it may differ) discards 4
	if n := len(e.ends[p0].ends); n != 1 {
		t.Fatalf("%d batch ends kept after a replay of the oldest; want 1 (the replay)", n)
	}
	committed(4, map[topicPartition]mirrorPos{tp0: {25, 3}})

	e.noteEnd(p0, 5, 50)
	e.noteEnd(p1, 5, 9)
	if err := e.Refresh(ctx, []spout.Partition{p1}); err != nil {
		t.Fatal(err)
	}
	committed(5, map[topicPartition]mirrorPos{tp1: {9, 5}})
	if len(e.ends) != 0 {
		t.Fatalf("ends left after every batch committed: %v", e.ends)
	}

	off := (&Spout{}).newEmitter(0).(*emitter) // mirror off
	off.noteEnd(p0, 1, 10)
	if err := off.Committed(ctx, 1); err != nil || len(off.ends) != 0 {
		t.Fatalf("without a mirror: Committed = %v, ends %v", err, off.ends)
	}
}
