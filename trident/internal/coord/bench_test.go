package coord

import (
	"fmt"
	"testing"
)

// BenchmarkBatch measures one batch's way through the coordinator: its
// emission (with the Persist before it), the processing ack, the commit and
// the commit ack (with the Persist and Success after it), including the
// Ready/Advance round trips a shell makes. Each iteration is one batch.
func BenchmarkBatch(b *testing.B) {
	for _, w := range []int{1, 8, 128} {
		b.Run(fmt.Sprintf("inflight=%d", w), func(b *testing.B) {
			c, err := New(Config{MaxBatchesInFlight: w}, State{})
			if err != nil {
				b.Fatal(err)
			}
			c.Tick() // fills the window
			drain := func() {
				for _, a := range c.Ready() {
					_ = a
				}
				c.Advance()
			}
			drain()
			b.ReportAllocs()
			for b.Loop() {
				next := c.Committed() + 1
				a, _ := c.Status(next)
				c.Ack(a, Processing) // queues Commit
				drain()
				c.Ack(a, Committing) // queues Persist, Success, EmitBatch
				drain()
			}
			if c.Committed() < 2 {
				b.Fatalf("committed %d", c.Committed())
			}
		})
	}
}
