package topology

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// feed is a durable, replayable source shared by every incarnation of a
// feedSpout, like a message queue: items are taken in order, items whose
// tree fails are replayed when replay is set, and items in flight when a
// worker dies are replayed by the next incarnation.
type feed struct {
	mu       sync.Mutex
	queue    []feedItem
	inflight map[any]feedItem
	acked    map[any]int
	failed   map[any]int
	opens    int
	replay   bool
	noMsgID  bool
}

type feedItem struct {
	id   any
	v    Values
	task TaskID // the task that has it in flight
}

func newFeed() *feed {
	return &feed{inflight: map[any]feedItem{}, acked: map[any]int{}, failed: map[any]int{}}
}

func (f *feed) add(id any, v ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, feedItem{id: id, v: v})
}

func (f *feed) ackCount(id any) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acked[id]
}

func (f *feed) failCount(id any) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed[id]
}

// counts returns the number of acked and failed messages.
func (f *feed) counts() (acked, failed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.acked {
		acked += n
	}
	for _, n := range f.failed {
		failed += n
	}
	return acked, failed
}

func (f *feed) newSpout() Spout { return &feedSpout{f: f} }

type feedSpout struct {
	f    *feed
	out  *SpoutCollector
	task TaskID
}

func (s *feedSpout) Open(_ context.Context, info TaskInfo, out *SpoutCollector) error {
	s.out, s.task = out, info.Task
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.opens++
	// Whatever this task's previous incarnation had in flight was lost
	// with it.
	for id, it := range s.f.inflight {
		if it.task == s.task {
			delete(s.f.inflight, id)
			s.f.queue = append([]feedItem{it}, s.f.queue...)
		}
	}
	return nil
}

func (s *feedSpout) NextTuple() {
	s.f.mu.Lock()
	if len(s.f.queue) == 0 {
		s.f.mu.Unlock()
		return
	}
	it := s.f.queue[0]
	s.f.queue = s.f.queue[1:]
	var id any
	if !s.f.noMsgID && it.id != nil {
		id = it.id
		it.task = s.task
		s.f.inflight[it.id] = it
	}
	s.f.mu.Unlock()
	s.out.Emit(id, it.v)
}

func (s *feedSpout) Ack(id any) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.acked[id]++
	delete(s.f.inflight, id)
}

func (s *feedSpout) Fail(id any) {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	s.f.failed[id]++
	it, ok := s.f.inflight[id]
	delete(s.f.inflight, id)
	if ok && s.f.replay {
		s.f.queue = append(s.f.queue, it)
	}
}

func (s *feedSpout) Close() error { return nil }

// boltFunc builds a Bolt from an execute function that gets the collector.
type boltFunc func(out *OutputCollector, t *Tuple)

func (f boltFunc) newBolt() Bolt { return &funcBolt{f: f} }

type funcBolt struct {
	f   boltFunc
	out *OutputCollector
}

func (b *funcBolt) Prepare(_ context.Context, _ TaskInfo, out *OutputCollector) error {
	b.out = out
	return nil
}
func (b *funcBolt) Execute(t *Tuple) { b.f(b.out, t) }
func (b *funcBolt) Cleanup() error   { return nil }

// identity re-emits every input anchored to it and acks it.
func identity(out *OutputCollector, t *Tuple) {
	out.Emit(t.Values(), t)
	out.Ack(t)
}

// ackAll acks every input.
func ackAll(out *OutputCollector, t *Tuple) { out.Ack(t) }

// mustBuild builds b or fails the test.
func mustBuild(t *testing.T, b *Builder) *Topology {
	t.Helper()
	topo, err := b.Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return topo
}

// submit runs topo on a new local cluster and registers its shutdown.
func submit(t *testing.T, topo *Topology, cfg Config) *Running {
	t.Helper()
	c := NewLocalCluster()
	r, err := c.Submit(t.Name(), topo, cfg)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = c.Shutdown(ctx)
	})
	return r
}

// stop shuts the topology down now, so that a synctest bubble can end.
func stop(t *testing.T, r *Running) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.Stop(ctx)
}
