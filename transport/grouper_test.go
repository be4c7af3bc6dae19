package transport

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGrouperOneCallPerTask: whatever the order of a frame's tasks, the
// grouper calls once per task, in order of first appearance, with that
// task's messages in frame order.
func TestGrouperOneCallPerTask(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var g grouper
	for round := range 2000 {
		n := 1 + rng.IntN(60)
		tasks := 1 + rng.IntN(20)
		msgs := make([]Message, n)
		for i := range msgs {
			task := TaskID(rng.IntN(tasks))
			if round%2 == 0 && i > 0 && rng.IntN(8) != 0 { // mostly runs
				task = msgs[i-1].Task
			}
			msgs[i] = Message{Kind: KindAck, Task: task, XOR: uint64(i)}
		}
		var order []TaskID
		want := map[TaskID][]uint64{}
		for _, m := range msgs {
			if _, ok := want[m.Task]; !ok {
				order = append(order, m.Task)
			}
			want[m.Task] = append(want[m.Task], m.XOR)
		}
		var calls []TaskID
		err := g.each(msgs, func(task TaskID, got []Message) error {
			calls = append(calls, task)
			var xors []uint64
			for _, m := range got {
				if m.Task != task {
					return fmt.Errorf("a message for %d in the call for %d", m.Task, task)
				}
				xors = append(xors, m.XOR)
			}
			if !slices.Equal(xors, want[task]) {
				return fmt.Errorf("task %d: got %v, want %v", task, xors, want[task])
			}
			return nil
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !slices.Equal(calls, order) {
			t.Fatalf("round %d: calls for %v, want %v", round, calls, order)
		}
	}
}
