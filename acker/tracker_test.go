package acker

import (
	"slices"
	"testing"
)

// step is one message to a Tracker and the outcome it must return.
type step struct {
	op   string // init, ack, fail, reset
	root RootID
	xor  uint64
	task TaskID
	want Outcome
}

func (s step) apply(tr *Tracker) Outcome {
	switch s.op {
	case "init":
		return tr.Init(s.root, s.xor, s.task)
	case "ack":
		return tr.Ack(s.root, s.xor)
	case "fail":
		return tr.Fail(s.root)
	case "reset":
		return tr.ResetTimeout(s.root)
	}
	panic("unknown op " + s.op)
}

func pending(r RootID, task TaskID) Outcome {
	return Outcome{Root: r, SpoutTask: task, Status: Pending}
}
func completed(r RootID, task TaskID) Outcome {
	return Outcome{Root: r, SpoutTask: task, Status: Completed}
}
func failed(r RootID, task TaskID) Outcome { return Outcome{Root: r, SpoutTask: task, Status: Failed} }
func timedOut(r RootID, task TaskID) Outcome {
	return Outcome{Root: r, SpoutTask: task, Status: TimedOut}
}

func TestMessageRules(t *testing.T) {
	const (
		r        = RootID(0x1234)
		a, b, c  = 0x0f0f_0000_1111_2222, 0x7777_aaaa_0000_0001, 0x8000_0000_0000_0003
		spout    = TaskID(7)
		orphanRt = RootID(0x99)
	)
	tests := []struct {
		name    string
		steps   []step
		wantLen int
	}{
		{"init then acks", []step{
			{op: "init", root: r, xor: a ^ b ^ c, task: spout, want: pending(r, spout)},
			{op: "ack", root: r, xor: a, want: pending(r, spout)},
			{op: "ack", root: r, xor: b, want: pending(r, spout)},
			{op: "ack", root: r, xor: c, want: completed(r, spout)},
		}, 0},
		{"acks before init", []step{
			{op: "ack", root: r, xor: b, want: pending(r, NoTask)},
			{op: "ack", root: r, xor: a, want: pending(r, NoTask)},
			{op: "ack", root: r, xor: c, want: pending(r, NoTask)},
			{op: "init", root: r, xor: a ^ b ^ c, task: spout, want: completed(r, spout)},
		}, 0},
		{"ack that spawns children", []step{
			{op: "init", root: r, xor: a, task: spout, want: pending(r, spout)},
			{op: "ack", root: r, xor: a ^ b ^ c, want: pending(r, spout)}, // a acked, b and c emitted
			{op: "ack", root: r, xor: c, want: pending(r, spout)},
			{op: "ack", root: r, xor: b, want: completed(r, spout)},
		}, 0},
		{"values cancelling before init do not complete", []step{
			{op: "ack", root: r, xor: a, want: pending(r, NoTask)},
			{op: "ack", root: r, xor: a, want: pending(r, NoTask)}, // value back to zero, no init
		}, 1},
		{"init with zero xor completes at once", []step{
			{op: "init", root: r, xor: 0, task: spout, want: completed(r, spout)},
		}, 0},
		{"fail after init", []step{
			{op: "init", root: r, xor: a ^ b, task: spout, want: pending(r, spout)},
			{op: "ack", root: r, xor: a, want: pending(r, spout)},
			{op: "fail", root: r, want: failed(r, spout)},
		}, 0},
		{"fail before init", []step{
			{op: "fail", root: r, want: pending(r, NoTask)},
			{op: "ack", root: r, xor: a, want: pending(r, NoTask)},
			{op: "init", root: r, xor: a ^ b, task: spout, want: failed(r, spout)},
		}, 0},
		{"fail before init wins over a zero value", []step{
			{op: "fail", root: r, want: pending(r, NoTask)},
			{op: "ack", root: r, xor: a, want: pending(r, NoTask)},
			{op: "init", root: r, xor: a, task: spout, want: failed(r, spout)},
		}, 0},
		{"fail before init with zero xor", []step{
			{op: "fail", root: r, want: pending(r, NoTask)},
			{op: "init", root: r, xor: 0, task: spout, want: failed(r, spout)},
		}, 0},
		{"reset timeout reports the spout task", []step{
			{op: "reset", root: r, want: pending(r, NoTask)},
			{op: "init", root: r, xor: a, task: spout, want: pending(r, spout)},
			{op: "reset", root: r, want: pending(r, spout)},
			{op: "ack", root: r, xor: a, want: completed(r, spout)},
		}, 0},
		{"duplicate init xors again", []step{
			{op: "init", root: r, xor: a, task: spout, want: pending(r, spout)},
			{op: "init", root: r, xor: a, task: spout, want: completed(r, spout)},
		}, 0},
		{"messages after the tree is done make an orphan", []step{
			{op: "init", root: orphanRt, xor: a ^ b, task: spout, want: pending(orphanRt, spout)},
			{op: "fail", root: orphanRt, want: failed(orphanRt, spout)},
			{op: "ack", root: orphanRt, xor: b, want: pending(orphanRt, NoTask)},
			{op: "fail", root: orphanRt, want: pending(orphanRt, NoTask)},
		}, 1},
		{"roots are independent", []step{
			{op: "init", root: 1, xor: a, task: 1, want: pending(1, 1)},
			{op: "init", root: 2, xor: a, task: 2, want: pending(2, 2)},
			{op: "ack", root: 3, xor: a, want: pending(3, NoTask)},
			{op: "ack", root: 2, xor: a, want: completed(2, 2)},
			{op: "fail", root: 1, want: failed(1, 1)},
		}, 1},
		{"root zero is an ordinary id", []step{
			{op: "ack", root: 0, xor: a, want: pending(0, NoTask)},
			{op: "init", root: 0, xor: a, task: 0, want: completed(0, 0)},
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustNew(t, Config{})
			for i, s := range tt.steps {
				if got := s.apply(tr); got != s.want {
					t.Fatalf("step %d %s(%v): got %v, want %v", i, s.op, s.root, got, s.want)
				}
				checkInvariants(t, tr)
			}
			if tr.Len() != tt.wantLen {
				t.Errorf("Len() = %d, want %d", tr.Len(), tt.wantLen)
			}
		})
	}
}

func TestLen(t *testing.T) {
	tr := mustNew(t, Config{})
	if tr.Len() != 0 {
		t.Fatalf("new tracker Len() = %d", tr.Len())
	}
	for i := range 10 {
		tr.Init(RootID(i), uint64(i)+1, 0)
		tr.Ack(RootID(100+i), 5) // created by an ack
		if got, want := tr.Len(), 2*(i+1); got != want {
			t.Fatalf("Len() = %d, want %d", got, want)
		}
	}
	tr.Ack(3, 4) // completes root 3
	tr.Fail(4)   // fails root 4
	tr.Fail(105) // no init: still pending
	tr.ResetTimeout(106)
	if got := tr.Len(); got != 18 {
		t.Fatalf("Len() = %d, want 18", got)
	}
}

func TestTimeoutBetweenTAndNT(t *testing.T) {
	for _, buckets := range []int{0, 2, 3, 5} {
		n := Config{TimeoutBuckets: buckets}.buckets()
		for phase := range n + 1 { // ticks before the init: expiry must not depend on them
			tr := mustNew(t, Config{TimeoutBuckets: buckets})
			for range phase {
				if got := tick(tr); len(got) != 0 {
					t.Fatalf("empty tracker expired %v", got)
				}
			}
			tr.Init(1, 0xabc, 4)
			for i := 1; i < n; i++ {
				if got := tick(tr); len(got) != 0 {
					t.Fatalf("buckets %d: expired after %d ticks, want %d: %v", n, i, n, got)
				}
				if tr.Len() != 1 {
					t.Fatalf("Len() = %d after %d ticks", tr.Len(), i)
				}
			}
			got := tick(tr)
			if want := []Outcome{timedOut(1, 4)}; !slices.Equal(got, want) {
				t.Fatalf("buckets %d: tick %d expired %v, want %v", n, n, got, want)
			}
			if tr.Len() != 0 {
				t.Fatalf("Len() = %d after expiry", tr.Len())
			}
			if got := tick(tr); len(got) != 0 {
				t.Fatalf("expired twice: %v", got)
			}
			checkInvariants(t, tr)
		}
	}
}

func TestAckDoesNotRefreshTimeout(t *testing.T) {
	tr := mustNew(t, Config{})
	tr.Init(1, 3, 2)
	tick(tr)
	tr.Ack(1, 1) // still pending, value 2
	if got, want := tick(tr), []Outcome{timedOut(1, 2)}; !slices.Equal(got, want) {
		t.Fatalf("expired %v, want %v", got, want)
	}
}

func TestEntryCreationStartsTimeout(t *testing.T) {
	for _, first := range []string{"ack", "fail", "reset"} {
		tr := mustNew(t, Config{TimeoutBuckets: 3})
		tick(tr)
		step{op: first, root: 9, xor: 5}.apply(tr)
		tick(tr)
		if got := tick(tr); len(got) != 0 {
			t.Fatalf("%s: expired after 2 of 3 ticks: %v", first, got)
		}
		if got, want := tick(tr), []Outcome{timedOut(9, NoTask)}; !slices.Equal(got, want) {
			t.Fatalf("%s: expired %v, want %v", first, got, want)
		}
	}
}

func TestInitRefreshesTimeout(t *testing.T) {
	tr := mustNew(t, Config{})
	tr.Ack(1, 5) // created before the init
	tick(tr)
	tr.Init(1, 6, 3) // moves to the newest bucket
	if got := tick(tr); len(got) != 0 {
		t.Fatalf("expired %v one tick after the init", got)
	}
	if got, want := tick(tr), []Outcome{timedOut(1, 3)}; !slices.Equal(got, want) {
		t.Fatalf("expired %v, want %v", got, want)
	}
}

func TestFailBeforeInitRefreshesTimeout(t *testing.T) {
	tr := mustNew(t, Config{})
	tr.Ack(1, 5)
	tick(tr)
	tr.Fail(1)
	if got := tick(tr); len(got) != 0 {
		t.Fatalf("expired %v one tick after the fail", got)
	}
	if got, want := tick(tr), []Outcome{timedOut(1, NoTask)}; !slices.Equal(got, want) {
		t.Fatalf("expired %v, want %v", got, want)
	}
}

func TestResetTimeoutKeepsTreeAlive(t *testing.T) {
	for _, buckets := range []int{2, 3} {
		tr := mustNew(t, Config{TimeoutBuckets: buckets})
		tr.Init(1, 0xff, 5)
		tr.Init(2, 0xff, 5) // not reset: expires on schedule
		for i := 1; i <= 10; i++ {
			got := tick(tr)
			if i == buckets {
				if want := []Outcome{timedOut(2, 5)}; !slices.Equal(got, want) {
					t.Fatalf("tick %d expired %v, want %v", i, got, want)
				}
			} else if len(got) != 0 {
				t.Fatalf("tick %d expired %v", i, got)
			}
			if o := tr.ResetTimeout(1); o != pending(1, 5) {
				t.Fatalf("ResetTimeout = %v", o)
			}
		}
		for i := 1; i < buckets; i++ {
			if got := tick(tr); len(got) != 0 {
				t.Fatalf("expired %v %d ticks after the last reset", got, i)
			}
		}
		if got, want := tick(tr), []Outcome{timedOut(1, 5)}; !slices.Equal(got, want) {
			t.Fatalf("expired %v, want %v", got, want)
		}
	}
}

func TestTickExpiresOnlyTheOldestBucket(t *testing.T) {
	tr := mustNew(t, Config{TimeoutBuckets: 3})
	var want [3][]Outcome
	for round := range 3 {
		for i := range 50 {
			r := RootID(round*1000 + i)
			tr.Init(r, 1, TaskID(round))
			want[round] = append(want[round], timedOut(r, TaskID(round)))
		}
		if round < 2 {
			if got := tick(tr); len(got) != 0 {
				t.Fatalf("round %d expired %v", round, got)
			}
		}
	}
	for round := range 3 {
		got := tick(tr)
		if !slices.Equal(got, want[round]) {
			t.Fatalf("tick %d expired %d roots, want the %d of round %d", round, len(got), len(want[round]), round)
		}
		checkInvariants(t, tr)
		if tr.Len() != 50*(2-round) {
			t.Fatalf("Len() = %d after round %d", tr.Len(), round)
		}
	}
}

// expiryPaths names the two ways Tick removes expired roots, by the
// bulkMin that selects them.
var expiryPaths = map[string]int{"one by one": 1 << 30, "bulk": 1}

func TestTickRemovesBeforeCallback(t *testing.T) {
	for path, bulkMin := range expiryPaths {
		tr := mustNew(t, Config{})
		tr.bulkMin = bulkMin
		for i := range 8 {
			tr.Init(RootID(i), 1, 0)
		}
		tick(tr)
		tr.Init(100, 1, 0) // survives
		var lens []int
		tr.Tick(func(o Outcome) {
			lens = append(lens, tr.Len())
			if o.Status != TimedOut || o.Root >= 8 {
				t.Errorf("%s: expired %v", path, o)
			}
		})
		want := []int{8, 7, 6, 5, 4, 3, 2, 1}
		if path == "bulk" {
			want = []int{1, 1, 1, 1, 1, 1, 1, 1}
		}
		if !slices.Equal(lens, want) {
			t.Errorf("%s: Len inside the callback: %v, want %v", path, lens, want)
		}
		checkInvariants(t, tr)
		if e, _, _ := tr.tab.find(100); e < 0 || tr.Len() != 1 {
			t.Errorf("%s: survivor lost", path)
		}
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestTickMisuse(t *testing.T) {
	tr := mustNew(t, Config{})
	mustPanic(t, "Tick(nil)", func() { tr.Tick(nil) })

	tr = mustNew(t, Config{})
	tr.Init(1, 1, 0)
	tr.Init(2, 1, 0)
	tick(tr)
	mustPanic(t, "Init inside the callback", func() {
		tr.Tick(func(Outcome) { tr.Init(3, 1, 0) })
	})
	// The panic left the tracker usable and consistent.
	checkInvariants(t, tr)
	if o := tr.Ack(5, 1); o != pending(5, NoTask) {
		t.Fatalf("Ack after a panicking callback = %v", o)
	}
	for name, f := range map[string]func(*Tracker){
		"Ack":          func(tr *Tracker) { tr.Ack(1, 1) },
		"Fail":         func(tr *Tracker) { tr.Fail(1) },
		"ResetTimeout": func(tr *Tracker) { tr.ResetTimeout(1) },
		"Tick":         func(tr *Tracker) { tr.Tick(func(Outcome) {}) },
	} {
		tr := mustNew(t, Config{})
		tr.Init(1, 1, 0)
		tick(tr)
		mustPanic(t, name+" inside the callback", func() { tr.Tick(func(Outcome) { f(tr) }) })
	}
}

func TestPanickingCallbackKeepsRemainingRoots(t *testing.T) {
	for path, bulkMin := range expiryPaths {
		tr := mustNew(t, Config{})
		tr.bulkMin = bulkMin
		for i := range 40 {
			tr.Init(RootID(i), 1, 0)
		}
		tick(tr)
		for i := 40; i < 50; i++ {
			tr.Init(RootID(i), 1, 0)
		}
		calls := 0
		mustPanic(t, path+" callback", func() {
			tr.Tick(func(Outcome) {
				calls++
				if calls == 3 {
					panic("boom")
				}
			})
		})
		if calls != 3 || tr.Len() != 47 {
			t.Fatalf("%s: calls %d, Len %d; want 3 and 47", path, calls, tr.Len())
		}
		checkInvariants(t, tr)
		// The 37 unreported roots stay in their bucket, which is now the
		// newest: the 10 later roots expire first, on schedule, and the 37
		// one full rotation late.
		if got := tick(tr); len(got) != 10 || got[0].Root != 40 {
			t.Fatalf("%s: expired %v, want roots 40 to 49", path, got)
		}
		if got := tick(tr); len(got) != 37 {
			t.Fatalf("%s: expired %d, want 37", path, len(got))
		}
		checkInvariants(t, tr)
	}
}
