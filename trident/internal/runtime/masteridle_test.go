package runtime

import (
	"testing"

	"github.com/squallstream/squall/txn"
)

// TestSourceTallyEmptyOnlyWhenEveryTaskNoted: a batch is empty only when
// every source task of the topology noted it here with no tuple; a task
// not heard from (it runs in another process) means "not known empty".
func TestSourceTallyEmptyOnlyWhenEveryTaskNoted(t *testing.T) {
	a := txn.Attempt{TxID: 3}
	tally := &sourceTally{tasks: 2, at: map[txn.Attempt]tallied{}}
	tally.note(a, 0)
	if tally.empty(a) {
		t.Fatal("empty with one of two source tasks noted")
	}
	tally.note(a, 0)
	tally.note(a, 0)
	if !tally.empty(a) {
		t.Fatal("not empty with both tasks noted, no tuple")
	}
	tally.note(a, 0)
	tally.note(a, 1)
	if tally.empty(a) {
		t.Fatal("empty although a task emitted a tuple")
	}
	if tally.empty(txn.Attempt{TxID: 9}) {
		t.Fatal("empty for an attempt nobody noted")
	}
	tally.note(txn.Attempt{TxID: 4}, 0)
	tally.note(txn.Attempt{TxID: 5}, 0)
	tally.forget(4)
	if len(tally.at) != 1 {
		t.Fatalf("forget(4) left %d attempts, want 1", len(tally.at))
	}
}
