package acker_test

import (
	"fmt"

	"github.com/squallstream/squall/acker"
)

// A spout tuple goes to two bolts (edges a and b); the first bolt emits one
// child anchored to its input (edge c) and acks; then the second bolt and
// the child's bolt ack. The acks may arrive before the init.
func Example() {
	tr, err := acker.New(acker.Config{})
	if err != nil {
		panic(err)
	}
	const root = acker.RootID(0x5eed)
	const a, b, c = 0x1111_2222_3333_4444, 0x0f0f_0f0f_0f0f_0f0f, 0x7654_3210_fedc_ba98

	fmt.Println(tr.Ack(root, b))       // the second bolt acks its input first
	fmt.Println(tr.Init(root, a^b, 7)) // the spout's init: two edges, spout task 7
	fmt.Println(tr.Ack(root, a^c))     // the first bolt acks a and adds its child c
	fmt.Println(tr.Ack(root, c))       // the child is acked: the tree is complete
	fmt.Println(tr.Len())
	// Output:
	// root 0000000000005eed pending (spout task none)
	// root 0000000000005eed pending (spout task 7)
	// root 0000000000005eed pending (spout task 7)
	// root 0000000000005eed completed (spout task 7)
	// 0
}

// Tick is called once per tick period by the goroutine that owns the
// Tracker; a tree left pending times out on the TimeoutBuckets-th tick.
func ExampleTracker_Tick() {
	tr, err := acker.New(acker.Config{TimeoutBuckets: 2})
	if err != nil {
		panic(err)
	}
	tr.Init(42, 0xabcdef, 3) // never acked
	for i := 1; i <= 2; i++ {
		tr.Tick(func(o acker.Outcome) { fmt.Println("tick", i, o) })
	}
	// Output:
	// tick 2 root 000000000000002a timed out (spout task 3)
}
