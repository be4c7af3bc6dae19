package acker

import "strconv"

// RootID identifies a tuple tree: the id a spout draws for a tuple emitted
// with a message id. It is a random 64-bit value.
type RootID uint64

// String returns the id as 16 lower-case hexadecimal digits.
func (r RootID) String() string {
	const digits = "0123456789abcdef"
	var b [16]byte
	v := uint64(r)
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return string(b[:])
}

// TaskID identifies a task, here the spout task that owns a tuple tree and
// receives its outcome.
type TaskID int32

// NoTask is the spout task of a tree whose init message has not arrived.
const NoTask TaskID = -1

// String returns the id in decimal, or "none" for NoTask.
func (t TaskID) String() string {
	if t == NoTask {
		return "none"
	}
	return strconv.FormatInt(int64(t), 10)
}

// Status is the state of a tuple tree as seen by the tracker.
type Status uint8

const (
	// Pending: the tree is still tracked; nothing is to be sent yet.
	Pending Status = iota
	// Completed: every tuple of the tree was acked. The tree is no longer
	// tracked; its spout task is to be told to ack.
	Completed
	// Failed: a tuple of the tree failed. The tree is no longer tracked; its
	// spout task is to be told to fail.
	Failed
	// TimedOut: the tree was neither completed nor failed in time. The tree
	// is no longer tracked; its spout task, if known, is to be told to fail.
	TimedOut
)

// String names the status.
func (s Status) String() string {
	switch s {
	case Pending:
		return "pending"
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	case TimedOut:
		return "timed out"
	default:
		return "status(" + strconv.Itoa(int(s)) + ")"
	}
}

// Done reports whether the status is final: Completed, Failed or TimedOut.
// A tree with a final status has been removed from the tracker.
func (s Status) Done() bool { return s == Completed || s == Failed || s == TimedOut }

// Outcome is what the tracker reports for a root after a message or a tick.
// SpoutTask is the task named by the root's init message, or NoTask when the
// init has not arrived.
type Outcome struct {
	Root      RootID
	SpoutTask TaskID
	Status    Status
}

// String describes the outcome, for logs and test failures.
func (o Outcome) String() string {
	return "root " + o.Root.String() + " " + o.Status.String() + " (spout task " + o.SpoutTask.String() + ")"
}
