package completion

import (
	"fmt"
	"strconv"

	"github.com/squallstream/squall/txn"
)

// Kind says what the shell must do for an Action.
type Kind uint8

const (
	// Ack: ack Action.Handle.
	Ack Kind = iota + 1
	// Fail: fail Action.Handle, so that its batch's tree fails.
	Fail
	// Finish: run the final step of Action.Attempt, anchored to
	// Action.Handle, then call Finished.
	Finish
	// Drop: free the per-batch data of Action.Attempt.
	Drop
	// Mismatch: Action.Attempt failed because upstream tasks reported
	// Action.Expected tuples and Action.Arrived arrived (Action.Early: of
	// the processing-phase share). Report it; Fail actions follow.
	Mismatch
	// Unprocessed: a commit arrived for Action.Attempt, which this task did
	// not process. Report it; a Fail of the commit follows.
	Unprocessed
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case Ack:
		return "ack"
	case Fail:
		return "fail"
	case Finish:
		return "finish"
	case Drop:
		return "drop"
	case Mismatch:
		return "mismatch"
	case Unprocessed:
		return "unprocessed"
	default:
		return "unknown"
	}
}

// Action is one step the shell executes for the machine.
type Action[H any] struct {
	Kind    Kind
	Attempt txn.Attempt // Finish, Drop, Mismatch, Unprocessed
	Handle  H           // Ack, Fail, Finish

	Early             bool // Mismatch
	Expected, Arrived int  // Mismatch
}

// String formats the action, for example "ack r1", "finish 3:1 r1" or
// "mismatch 3:1 sent=2 arrived=1".
func (a Action[H]) String() string {
	switch a.Kind {
	case Ack, Fail:
		return a.Kind.String() + " " + fmt.Sprint(a.Handle)
	case Finish:
		return "finish " + a.Attempt.String() + " " + fmt.Sprint(a.Handle)
	case Mismatch:
		s := "mismatch " + a.Attempt.String()
		if a.Early {
			s += " early"
		}
		return s + " sent=" + strconv.Itoa(a.Expected) + " arrived=" + strconv.Itoa(a.Arrived)
	default:
		return a.Kind.String() + " " + a.Attempt.String()
	}
}

// Phase is where a recorded attempt stands.
type Phase uint8

const (
	// Open: the attempt is collecting reports and data.
	Open Phase = iota + 1
	// Waiting: a committer has everything and waits for the commit.
	Waiting
	// Finishing: Finish was queued and Finished not called yet.
	Finishing
	// Failed: the attempt failed; its late tuples fail too.
	Failed
)

// String names the phase.
func (p Phase) String() string {
	switch p {
	case Open:
		return "open"
	case Waiting:
		return "waiting"
	case Finishing:
		return "finishing"
	case Failed:
		return "failed"
	default:
		return "none"
	}
}
