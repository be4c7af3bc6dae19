package trident

import (
	"slices"

	"github.com/squallstream/squall/trident/internal/exec"
)

// JoinMode says which unmatched tuples a join keeps.
type JoinMode uint8

const (
	// Inner keeps only keys present on both sides.
	Inner JoinMode = iota
	// LeftOuter also keeps left tuples without a match (right values nil).
	LeftOuter
	// RightOuter also keeps right tuples without a match (left values nil).
	RightOuter
	// FullOuter keeps unmatched tuples of both sides.
	FullOuter
)

// Join joins the tuples of left and right within each batch on equal keys
// (leftKeys of left and rightKeys of right, pairwise). Each output tuple
// holds the key values, then left's other fields, then right's other
// fields, named by outputs, which must name them all.
func (t *Topology) Join(left *Stream, leftKeys Fields, right *Stream, rightKeys Fields, mode JoinMode, outputs ...string) *Stream {
	left.checkFields("Join", leftKeys)
	right.checkFields("Join", rightKeys)
	if left.t != t || right.t != t {
		t.errorf("Join: a stream belongs to another topology")
	}
	if left.n == right.n {
		t.errorf("Join: a stream cannot be joined with itself; Project one side first")
	}
	if len(leftKeys) == 0 || len(leftKeys) != len(rightKeys) {
		t.errorf("Join: %d left keys and %d right keys; both sides need the same number, at least one", len(leftKeys), len(rightKeys))
	}
	if mode > FullOuter {
		t.errorf("Join: unknown mode %d", mode)
	}
	op := &exec.JoinPlan{Keys: len(leftKeys), KeepLeft: mode == LeftOuter || mode == FullOuter, KeepRight: mode == RightOuter || mode == FullOuter}
	for side, s := range []*Stream{left, right} {
		keys := []Fields{leftKeys, rightKeys}[side]
		op.KeyIdx[side] = s.n.sch.indexes(keys)
		for i, f := range s.n.sch.fields {
			if !slices.Contains(keys, f) {
				op.RestIdx[side] = append(op.RestIdx[side], i)
			}
		}
	}
	if want := op.Keys + len(op.RestIdx[0]) + len(op.RestIdx[1]); len(outputs) != want {
		t.errorf("Join: %d output fields for %d values (keys, then left's and right's other fields)", len(outputs), want)
	}
	left.checkOutputs("Join", outputs)
	n := &node{op: &exec.Join{Plan: op, Keys: [2][]string{leftKeys, rightKeys}}, parent: left.n, others: []*node{right.n},
		sch: newSchema(slices.Clone(outputs))}
	return &Stream{t: t, n: t.add(n)}
}
