package transport

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGrouperKeepsTaskOrder: whatever the order of a frame's tasks, the
// grouper hands every message to a call for its task, each task's
// messages in frame order: one call per run of consecutive messages for
// one task when there are at most maxRuns, else one call per task, in
// order of first appearance.
func TestGrouperKeepsTaskOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var g grouper
	for round := range 2000 {
		n := 1 + rng.IntN(60)
		tasks := 1 + rng.IntN(20)
		msgs := make([]Message, n)
		runs := 0
		for i := range msgs {
			task := TaskID(rng.IntN(tasks))
			if round%2 == 0 && i > 0 && rng.IntN(8) != 0 { // mostly long runs
				task = msgs[i-1].Task
			}
			msgs[i] = Message{Kind: KindAck, Task: task, XOR: uint64(i)}
			if i == 0 || task != msgs[i-1].Task {
				runs++
			}
		}
		var wantCalls []TaskID
		want := map[TaskID][]uint64{}
		for i, m := range msgs {
			if _, ok := want[m.Task]; !ok || (runs <= maxRuns && m.Task != msgs[i-1].Task) {
				wantCalls = append(wantCalls, m.Task)
			}
			want[m.Task] = append(want[m.Task], m.XOR)
		}
		var calls []TaskID
		got := map[TaskID][]uint64{}
		err := g.each(msgs, func(task TaskID, ms []Message) error {
			calls = append(calls, task)
			for _, m := range ms {
				if m.Task != task {
					return fmt.Errorf("a message for %d in the call for %d", m.Task, task)
				}
				got[task] = append(got[task], m.XOR)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !slices.Equal(calls, wantCalls) {
			t.Fatalf("round %d (%d runs): calls for %v, want %v", round, runs, calls, wantCalls)
		}
		for task, xors := range want {
			if !slices.Equal(got[task], xors) {
				t.Fatalf("round %d: task %d got %v, want %v", round, task, got[task], xors)
			}
		}
	}
}
