package topology

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/squallstream/squall/internal/keyenc"
)

// recorder remembers which task received which values.
type recorder struct {
	mu     sync.Mutex
	byTask map[TaskID][]Values
	tasks  map[string][]TaskID // from TaskInfo.Tasks, by component
}

func newRecorder() *recorder {
	return &recorder{byTask: map[TaskID][]Values{}, tasks: map[string][]TaskID{}}
}

func (r *recorder) newBolt() Bolt { return &recordBolt{r: r} }

func (r *recorder) received() map[TaskID][]Values {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[TaskID][]Values, len(r.byTask))
	for k, v := range r.byTask {
		out[k] = append([]Values(nil), v...)
	}
	return out
}

type recordBolt struct {
	r    *recorder
	task TaskID
	out  *OutputCollector
}

func (b *recordBolt) Prepare(_ context.Context, info TaskInfo, out *OutputCollector) error {
	b.task, b.out = info.Task, out
	b.r.mu.Lock()
	defer b.r.mu.Unlock()
	b.r.tasks[info.Component] = info.Tasks(info.Component)
	b.r.byTask[b.task] = nil
	return nil
}

func (b *recordBolt) Execute(t *Tuple) {
	b.r.mu.Lock()
	b.r.byTask[b.task] = append(b.r.byTask[b.task], t.Values())
	b.r.mu.Unlock()
	b.out.Ack(t)
}

func (b *recordBolt) Cleanup() error { return nil }

// runGrouping feeds values through one spout into a 4-task bolt (on 2
// executors) subscribed with g, and returns what each task received.
func runGrouping(t *testing.T, g Grouping, values ...Values) (*recorder, *feed) {
	t.Helper()
	rec, f := newRecorder(), newFeed()
	b := NewBuilder()
	b.Spout("feed", f.newSpout).Output("word", "n")
	b.Bolt("rec", rec.newBolt).Parallelism(2).Tasks(4).Input("feed", g)
	r := submit(t, mustBuild(t, b), DefaultConfig())
	for i, v := range values {
		f.add(i, v...)
	}
	settle()
	expectCounts(t, f, len(values), 0)
	stop(t, r)
	return rec, f
}

func words(n int) []Values {
	names := []string{"apple", "pear", "fig", "plum", "kiwi", "lime", "date"}
	out := make([]Values, n)
	for i := range out {
		out[i] = Values{names[i%len(names)], i}
	}
	return out
}

func TestFieldsGroupingSendsEqualKeysToOneTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := runGrouping(t, ByFields("word"), words(70)...)
		owner := map[any]TaskID{}
		total := 0
		for task, vs := range rec.received() {
			for _, v := range vs {
				total++
				if o, seen := owner[v[0]]; seen && o != task {
					t.Fatalf("word %v went to tasks %d and %d", v[0], o, task)
				}
				owner[v[0]] = task
			}
		}
		if total != 70 || len(owner) != 7 {
			t.Fatalf("received %d tuples of %d words; want 70 of 7", total, len(owner))
		}
	})
}

func TestShuffleGroupingSpreadsEvenly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := runGrouping(t, Shuffle(), words(40)...)
		got := rec.received()
		if len(got) != 4 {
			t.Fatalf("%d tasks ran; want 4", len(got))
		}
		for task, vs := range got {
			if len(vs) != 10 {
				t.Fatalf("task %d received %d of 40; want 10", task, len(vs))
			}
		}
	})
}

func TestAllGroupingReachesEveryTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := runGrouping(t, All(), words(5)...)
		for task, vs := range rec.received() {
			if len(vs) != 5 {
				t.Fatalf("task %d received %d of 5", task, len(vs))
			}
		}
	})
}

func TestGlobalGroupingPicksLowestTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := runGrouping(t, Global(), words(9)...)
		tasks := rec.tasks["rec"]
		for task, vs := range rec.received() {
			want := 0
			if task == tasks[0] {
				want = 9
			}
			if len(vs) != want {
				t.Fatalf("task %d received %d; want %d", task, len(vs), want)
			}
		}
	})
}

// lastTask sends everything to the highest target task.
type lastTask struct{ targets []TaskID }

func (l *lastTask) Prepare(targets []TaskID) { l.targets = targets }
func (l *lastTask) ChooseTasks(_ TaskID, _ Values, dst []TaskID) []TaskID {
	return append(dst, l.targets[len(l.targets)-1])
}

func TestCustomGrouping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, _ := runGrouping(t, Custom(func() CustomGrouping { return &lastTask{} }), words(6)...)
		tasks := rec.tasks["rec"]
		if got := rec.received()[tasks[3]]; len(got) != 6 {
			t.Fatalf("last task received %d; want 6", len(got))
		}
	})
}

// directSpout sends each message to the bolt task named by its value.
type directSpout struct {
	f       *feed
	out     *SpoutCollector
	targets []TaskID
}

func (s *directSpout) Open(_ context.Context, info TaskInfo, out *SpoutCollector) error {
	s.out, s.targets = out, info.Tasks("rec")
	return nil
}

func (s *directSpout) NextTuple() {
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	for _, it := range s.f.queue {
		i := it.v[0].(int)
		s.out.EmitDirect(s.targets[i], "direct", it.id, it.v)
	}
	s.f.queue = nil
}
func (s *directSpout) Ack(id any)   { s.f.acked[id]++ }
func (s *directSpout) Fail(id any)  { s.f.failed[id]++ }
func (s *directSpout) Close() error { return nil }

func TestDirectGrouping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, rec := newFeed(), newRecorder()
		b := NewBuilder()
		b.Spout("direct", func() Spout { return &directSpout{f: f} }).DirectStream("direct", "i")
		b.Bolt("rec", rec.newBolt).Tasks(3).InputStream("direct", "direct", Direct())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		f.add("a", 2)
		f.add("b", 2)
		f.add("c", 0)
		settle()
		tasks := rec.tasks["rec"]
		got := rec.received()
		if len(got[tasks[0]]) != 1 || len(got[tasks[1]]) != 0 || len(got[tasks[2]]) != 2 {
			t.Fatalf("received %v; want 1, 0 and 2 tuples on tasks %v", got, tasks)
		}
		expectCounts(t, f, 3, 0)
		stop(t, r)
	})
}

func TestEmitMisuseCrashesWithClearError(t *testing.T) {
	cases := map[string]func(out *SpoutCollector){
		"undeclared stream":    func(out *SpoutCollector) { out.EmitStream("nope", nil, Values{1}) },
		"wrong value count":    func(out *SpoutCollector) { out.Emit(nil, Values{1, 2}) },
		"direct on plain":      func(out *SpoutCollector) { out.EmitDirect(0, DefaultStream, nil, Values{1}) },
		"plain on direct":      func(out *SpoutCollector) { out.EmitStream("d", nil, Values{1}) },
		"direct to non-target": func(out *SpoutCollector) { out.EmitDirect(0, "d", nil, Values{1}) },
		"direct to no task":    func(out *SpoutCollector) { out.EmitDirect(NoTask, "d", nil, Values{1}) },
	}
	want := map[string]string{
		"undeclared stream":    `undeclared stream "nope"`,
		"wrong value count":    "emitted 2 values",
		"direct on plain":      "not a direct stream",
		"plain on direct":      "use EmitDirect",
		"direct to non-target": "does not subscribe",
		"direct to no task":    "EmitDirect to NoTask",
	}
	for name, emit := range cases {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := NewBuilder()
				b.Spout("s", func() Spout { return &emitOnce{emit: emit} }).Output("v").DirectStream("d", "v")
				b.Bolt("sink", boltFunc(ackAll).newBolt).Input("s", Shuffle()).InputStream("s", "d", Direct())
				r := submit(t, mustBuild(t, b), DefaultConfig())
				settle()
				h := r.Health()
				if h.Crashes == 0 || !strings.Contains(h.LastCrash.Error(), want[name]) {
					t.Fatalf("health = %+v; want a crash mentioning %q", h, want[name])
				}
				stop(t, r)
			})
		})
	}
}

type emitOnce struct {
	emit func(out *SpoutCollector)
	out  *SpoutCollector
	done bool
}

func (s *emitOnce) Open(_ context.Context, _ TaskInfo, out *SpoutCollector) error {
	s.out = out
	return nil
}
func (s *emitOnce) NextTuple() {
	if !s.done {
		s.done = true
		s.emit(s.out)
	}
}
func (s *emitOnce) Ack(any)      {}
func (s *emitOnce) Fail(any)     {}
func (s *emitOnce) Close() error { return nil }

func TestHashValueGroupsIntegersByValue(t *testing.T) {
	hv := func(v any) uint64 {
		var buf []byte
		return hashValue(keyenc.HashOffset, v, &buf)
	}
	if hv(int64(7)) != hv(7) || hv(uint8(7)) != hv(7) {
		t.Fatal("equal integers of different types hash differently")
	}
	if hv("7") == hv(7) {
		t.Fatal("a string and an integer collide")
	}
	if hv([]byte("ab")) == hv("ab") {
		t.Fatal("bytes and a string of the same content, different state keys, hash equally")
	}
}
