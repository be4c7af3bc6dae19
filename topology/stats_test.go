package topology

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestStatsPerTask: a router sends value n directly to task n mod 4 of a
// bolt with four tasks in two executors; task 3 fails its tuples and task
// 2 reports an error for each. Each task's counters are its own, and the
// component's are their sums.
func TestStatsPerTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.Bolt("split", func() Bolt { return &splitBolt{} }).DirectStream("direct", "n").Input("feed", Shuffle())
		b.Bolt("by", func() Bolt { return &byTaskBolt{} }).Tasks(4).Parallelism(2).InputStream("split", "direct", Direct())
		topo := mustBuild(t, b)
		r := submit(t, topo, DefaultConfig())
		for i := range 8 {
			f.add(i, i)
		}
		settle()
		expectCounts(t, f, 6, 2)
		stop(t, r)

		s := r.Stats()
		ids := topo.component("by").taskIDs
		want := []TaskStats{
			{Task: ids[0], Executed: 2, Acked: 2},
			{Task: ids[1], Executed: 2, Acked: 2},
			{Task: ids[2], Executed: 2, Acked: 2, Errors: 2},
			{Task: ids[3], Executed: 2, Failed: 2},
		}
		by := s.Components["by"]
		if !slices.Equal(by.Tasks, want) {
			t.Fatalf("by tasks = %+v, want %+v", by.Tasks, want)
		}
		if by.Executed != 8 || by.Acked != 6 || by.Failed != 2 || by.Errors != 2 {
			t.Fatalf("by sums = %+v", by)
		}
		split := s.Components["split"]
		if len(split.Tasks) != 1 || split.Tasks[0].Task != topo.component("split").taskIDs[0] ||
			split.Tasks[0].Executed != 8 || split.Tasks[0].Emitted != 8 || split.Emitted != 8 {
			t.Fatalf("split = %+v", split)
		}
		feed := s.Components["feed"]
		if len(feed.Tasks) != 1 || feed.Tasks[0].Emitted != 8 || feed.Tasks[0].Acked != 6 || feed.Tasks[0].Failed != 2 {
			t.Fatalf("feed = %+v", feed)
		}
		acker := s.Components[ackerComponent]
		if len(acker.Tasks) != 1 || acker.Tasks[0].Acked != 6 || acker.Tasks[0].Failed != 2 {
			t.Fatalf("acker = %+v", acker)
		}
	})
}

// splitBolt sends n directly to by's task n mod 4.
type splitBolt struct {
	out     *OutputCollector
	targets []TaskID
}

func (b *splitBolt) Prepare(_ context.Context, info TaskInfo, out *OutputCollector) error {
	b.out, b.targets = out, info.Tasks("by")
	return nil
}

func (b *splitBolt) Execute(t *Tuple) {
	n := t.Value(0).(int)
	b.out.EmitDirect(b.targets[n%len(b.targets)], "direct", Values{n}, t)
	b.out.Ack(t)
}

func (b *splitBolt) Cleanup() error { return nil }

// byTaskBolt acks on its tasks of index 0 to 2, reporting an error on
// index 2, and fails on index 3.
type byTaskBolt struct {
	out   *OutputCollector
	index int
}

func (b *byTaskBolt) Prepare(_ context.Context, info TaskInfo, out *OutputCollector) error {
	b.out, b.index = out, info.Index
	return nil
}

func (b *byTaskBolt) Execute(t *Tuple) {
	switch b.index {
	case 2:
		b.out.ReportError(errors.New("task 2"))
		b.out.Ack(t)
	case 3:
		b.out.Fail(t)
	default:
		b.out.Ack(t)
	}
}

func (b *byTaskBolt) Cleanup() error { return nil }

// TestTransferredAndExecuteLatency: the feed's tuples go to the three
// tasks of "fan" (all grouping) and to "slow", whose Execute takes 10ms of
// virtual time: transferred counts four per emit, and slow's execute
// latency and busy time are its sleeps.
func TestTransferredAndExecuteLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		b.Bolt("fan", boltFunc(ackAll).newBolt).Tasks(3).Input("feed", All())
		b.Bolt("slow", boltFunc(func(out *OutputCollector, t *Tuple) {
			time.Sleep(10 * time.Millisecond)
			out.Ack(t)
		}).newBolt).Input("feed", Shuffle())
		r := submit(t, mustBuild(t, b), DefaultConfig())
		for i := range 8 {
			f.add(i, i)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		expectCounts(t, f, 8, 0)
		stop(t, r)

		s := r.Stats()
		feed := s.Components["feed"]
		if feed.Emitted != 8 || feed.Transferred != 32 || feed.Tasks[0].Transferred != 32 {
			t.Fatalf("feed = %+v", feed)
		}
		if fan := s.Components["fan"]; fan.Executed != 24 || fan.Transferred != 0 || fan.ExecuteLatency.Count != 24 ||
			fan.ExecuteLatency.Max != 0 || fan.Busy != 0 || fan.Executors != 1 {
			t.Fatalf("fan = %+v", fan)
		}
		slow := s.Components["slow"]
		if slow.Busy != 80*time.Millisecond || slow.Executors != 1 {
			t.Fatalf("slow busy %v, executors %d; want 80ms, 1", slow.Busy, slow.Executors)
		}
		if l := slow.ExecuteLatency; l.Count != 8 || l.Max != 10*time.Millisecond ||
			l.P50 < 9*time.Millisecond || l.P50 > 11*time.Millisecond {
			t.Fatalf("slow execute latency = %+v", l)
		}
		if l := slow.ExecuteLatency; l.Sum != 80*time.Millisecond {
			t.Fatalf("slow execute latency sum %v, want 80ms", l.Sum)
		}
		for _, b := range slow.ExecuteLatency.Buckets {
			want := uint64(0)
			if b.Below > 10*time.Millisecond {
				want = 8
			}
			if b.Count != want {
				t.Fatalf("slow: %d latencies below %v, want %d", b.Count, b.Below, want)
			}
		}
		if l := feed.CompleteLatency; l.Count != 8 || len(l.Buckets) == 0 || l.Buckets[len(l.Buckets)-1].Count != 8 || l.Sum <= 0 {
			t.Fatalf("feed complete latency = %+v", l)
		}
		if feed.ExecuteLatency.Count != 0 || feed.Busy != 0 {
			t.Fatalf("spout with execute figures: %+v", feed)
		}
	})
}

// Active follows StartInactive, Activate and Deactivate; Config has the
// defaults filled in.
func TestActiveAndConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeed()
		b := NewBuilder()
		b.Spout("feed", f.newSpout).Output("n")
		cfg := DefaultConfig()
		cfg.StartInactive = true
		cfg.BatchSize = 16
		r := submit(t, mustBuild(t, b), cfg)
		if r.Active() {
			t.Fatal("active with StartInactive")
		}
		r.Activate()
		if !r.Active() {
			t.Fatal("not active after Activate")
		}
		r.Deactivate()
		if r.Active() {
			t.Fatal("active after Deactivate")
		}
		c := r.Config()
		if c.BatchSize != 16 || c.QueueCapacity != 64 || c.MessageTimeout != 30*time.Second || c.Ackers != 1 ||
			!c.StartInactive || c.Logger == nil || c.Clock == nil {
			t.Fatalf("config = %+v", c)
		}
		stop(t, r)
	})
}
