package trident

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// closingLister is a Lister with resources: it fails the test if it is
// called after Close or closed twice.
type closingLister struct {
	t      *testing.T
	src    *spouttest.Source
	mu     sync.Mutex
	closed bool
	calls  int
}

func (l *closingLister) Partitions(ctx context.Context) ([]spout.Partition, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.t.Errorf("Lister used after Close")
		return nil, spout.ErrClosed
	}
	l.calls++
	return l.src.Partitions(ctx)
}

// state returns whether l was closed and how often it was called.
func (l *closingLister) state() (closed bool, calls int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed, l.calls
}

func (l *closingLister) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.t.Errorf("Lister closed twice")
	}
	l.closed = true
	return nil
}

// TestListerLivesWithItsWorker: a worker crash closes the worker's Lister,
// and the restarted worker lists through a new one; no Lister is called
// after its Close, and the counts are exact.
func TestListerLivesWithItsWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := spouttest.NewSource("p0", "p1")
		want := map[string]int64{}
		for i := range 60 {
			w := faultWords[i%len(faultWords)]
			src.Append(spout.Partition([]string{"p0", "p1"}[i%2]), w)
			want[w]++
		}
		src.SetMaxBatch(4)
		var mu sync.Mutex
		var listers []*closingLister
		newLister := func() spout.Lister {
			mu.Lock()
			defer mu.Unlock()
			l := &closingLister{t: t, src: src}
			listers = append(listers, l)
			return l
		}
		var seen atomic.Int64
		var crashed atomic.Bool
		tt := NewTopology("listers")
		s := tt.NewStream("words", OpaqueSource(Fields{"partition", "offset", "word"}, newLister,
			func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }))
		g := s.Each(Fields{"word"}, FunctionFunc(func(_ context.Context, tu Tuple, out Collector) error {
			if seen.Add(1) == 25 && crashed.CompareAndSwap(false, true) {
				panic("injected crash")
			}
			out.Emit(tu.String("word"))
			return nil
		}), "w").GroupBy("w")
		f := OpaqueMemory[int64]("counts")
		PersistentAggregate(g, f, Fields{"w"}, count{}, "count")
		cfg := Config{}
		cfg.BatchEmitInterval = time.Millisecond
		cfg.Topology.RestartMinBackoff = 10 * time.Millisecond
		r := submit(t, tt, cfg)
		waitEvery(t, time.Hour, 10*time.Millisecond, "every record to be counted", func() bool {
			return maps.Equal(readCounts(t, f, 1, faultWords...), want)
		})
		if err := r.WaitCommitted(context.Background(), r.Committed()+3); err != nil {
			t.Fatal(err)
		}
		if got := readCounts(t, f, 1, faultWords...); !maps.Equal(got, want) {
			t.Fatalf("counts %v, want %v", got, want)
		}
		if h := r.Health(); h.Crashes != 1 {
			t.Fatalf("crashes = %d (last %v), want 1", h.Crashes, h.LastCrash)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(listers) != 2 {
			t.Fatalf("%d Listers made, want one per worker start (2)", len(listers))
		}
		closed1, calls1 := listers[0].state()
		closed2, calls2 := listers[1].state()
		if !closed1 || calls1 == 0 || closed2 || calls2 == 0 {
			t.Fatalf("first Lister closed %v after %d calls, second closed %v after %d; want the first closed with its worker and both used",
				closed1, calls1, closed2, calls2)
		}
	})
}
