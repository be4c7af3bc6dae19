package coord

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/squallstream/squall/txn"
)

// ActionKind says what the shell must do for an Action.
type ActionKind uint8

const (
	// Persist: durably store Action.State (for example with a coordination
	// store's compare-and-set) before executing the next action.
	Persist ActionKind = iota + 1
	// EmitBatch: start processing Action.Attempt: the spouts emit the batch
	// and the shell later reports its processing with Ack or Fail.
	EmitBatch
	// Commit: start the commit phase of Action.Attempt; the shell later
	// reports it with Ack or Fail.
	Commit
	// Success: Action.Attempt committed; tell the spouts so they can clean
	// up metadata before its txid. Nothing is reported back.
	Success
)

// String names the kind.
func (k ActionKind) String() string {
	switch k {
	case Persist:
		return "persist"
	case EmitBatch:
		return "emit"
	case Commit:
		return "commit"
	case Success:
		return "success"
	default:
		return "unknown"
	}
}

// Action is one step the shell executes for the coordinator.
type Action struct {
	Kind    ActionKind
	Attempt txn.Attempt // EmitBatch, Commit, Success
	State   State       // Persist
}

// String formats the action, for example "emit 3:1" or
// "persist committed=2 attempts=[3:1 4:0]".
func (a Action) String() string {
	if a.Kind == Persist {
		return "persist " + a.State.String()
	}
	return a.Kind.String() + " " + a.Attempt.String()
}

// State is the coordinator's durable state: what New needs to resume.
type State struct {
	// Committed is the last committed txid; 0 before the first commit.
	Committed txn.TxID
	// Attempts holds, in increasing txid order, the highest attempt number
	// used for each txid after Committed that was ever emitted.
	Attempts []txn.Attempt
	// Failures holds, in increasing txid order, the failures counted
	// against Config.MaxAttempts for each txid after Committed that has
	// any.
	Failures []Failures
}

// Failures is the number of failures counted against one txid.
type Failures struct {
	TxID txn.TxID
	N    uint32
}

// String returns "txid:failures", for example "3:2".
func (f Failures) String() string {
	return f.TxID.String() + ":" + strconv.FormatUint(uint64(f.N), 10)
}

// String formats the state, for example "committed=2 attempts=[3:1 4:0]"
// or, with failures counted, "committed=2 attempts=[3:1 4:0] failures=[3:1]".
func (s State) String() string {
	var b strings.Builder
	b.WriteString("committed=")
	b.WriteString(s.Committed.String())
	writeList(&b, " attempts", s.Attempts)
	if len(s.Failures) > 0 {
		writeList(&b, " failures", s.Failures)
	}
	return b.String()
}

// writeList writes name=[x1 x2 ...].
func writeList[T fmt.Stringer](b *strings.Builder, name string, xs []T) {
	b.WriteString(name)
	b.WriteString("=[")
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.String())
	}
	b.WriteByte(']')
}
