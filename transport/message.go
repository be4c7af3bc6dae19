package transport

import (
	"strconv"

	"github.com/squallstream/squall/acker"
)

// TaskID identifies a task of the topology: the destination of every
// message and the source of a tuple. It is the acker's and the topology
// runtime's task id.
type TaskID = acker.TaskID

// RootID identifies a tuple tree.
type RootID = acker.RootID

// Kind says what a Message carries. The zero Kind is invalid.
type Kind uint8

const (
	// KindTuple is a tuple for a bolt task: Stream, Source, Values and
	// Anchors. Trident's coordination ($batch, $commit, $coord …) travels
	// as tuples too, on its own streams.
	KindTuple Kind = 1 + iota
	// KindInit is a spout's init for the acker task Task: Root, XOR (the
	// XOR of the edge ids the spout emitted) and Source (the spout task
	// that owns the tree and receives its outcome).
	KindInit
	// KindAck is a bolt's ack for the acker task Task: Root and XOR (the
	// input's edge id XOR the edge ids emitted anchored to it).
	KindAck
	// KindFail fails the tree Root at the acker task Task.
	KindFail
	// KindReset restarts the timeout of the tree Root at the acker task
	// Task.
	KindReset
	// KindOutcome tells the spout task Task the Status of its tree Root.
	KindOutcome

	kindEnd // one past the last valid Kind
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindTuple:
		return "tuple"
	case KindInit:
		return "init"
	case KindAck:
		return "ack"
	case KindFail:
		return "fail"
	case KindReset:
		return "reset"
	case KindOutcome:
		return "outcome"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Anchor is one tree a tuple belongs to: the tree's root and the XOR of
// the edge ids that lead to this tuple in it (Storm's anchorsToIds).
type Anchor struct {
	Root RootID
	Edge uint64
}

// Message is the unit the transport moves: one tuple or one acker control
// message for one destination task. Which fields are meaningful depends on
// Kind (see the Kind constants); the others must be zero and are not sent.
//
// A Message handed to Client.Send is encoded before Send returns, so the
// caller may reuse it and its slices at once. A Message delivered to a
// Handler owns its Values and Anchors slices (fresh memory, shared with
// nothing and never reused by the server), so a handler may keep them;
// the slice of messages itself is only valid during the call. Values
// never share memory with the frame; a short string value may be the
// same string as in an earlier message of the connection, which strings
// being immutable makes no difference.
type Message struct {
	Kind Kind
	Task TaskID // the destination task

	Stream  string   // KindTuple: the stream the tuple was emitted on
	Source  TaskID   // KindTuple: the emitting task; KindInit: the spout task
	Values  []any    // KindTuple: the tuple's values (see the package comment for the types)
	Anchors []Anchor // KindTuple: the tuple's trees; empty for an untracked tuple

	Root   RootID       // KindInit, KindAck, KindFail, KindReset, KindOutcome
	XOR    uint64       // KindInit, KindAck
	Status acker.Status // KindOutcome
}
