package trident

import "slices"

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
	op := &joinPlan{mode: mode, keys: len(leftKeys)}
	for side, s := range []*Stream{left, right} {
		keys := []Fields{leftKeys, rightKeys}[side]
		op.keyIdx[side] = s.n.sch.indexes(keys)
		for i, f := range s.n.sch.fields {
			if !slices.Contains(keys, f) {
				op.restIdx[side] = append(op.restIdx[side], i)
			}
		}
	}
	if want := op.keys + len(op.restIdx[0]) + len(op.restIdx[1]); len(outputs) != want {
		t.errorf("Join: %d output fields for %d values (keys, then left's and right's other fields)", len(outputs), want)
	}
	left.checkOutputs("Join", outputs)
	n := &node{op: &joinOp{plan: op, keys: [2]Fields{leftKeys, rightKeys}}, parent: left.n, others: []*node{right.n},
		sch: newSchema(slices.Clone(outputs))}
	return &Stream{t: t, n: t.add(n)}
}

// joinPlan is where the keys and other fields of each side of a join
// are.
type joinPlan struct {
	mode    JoinMode
	keys    int
	keyIdx  [2][]int
	restIdx [2][]int
}

// joinBatch is one batch's join state in one task.
type joinBatch struct {
	op     *joinPlan
	groups map[string]*joinGroup
	order  []*joinGroup
}

type joinGroup struct {
	key   []any
	sides [2][][]any // the other fields of each side's tuples
}

func (o *joinPlan) newBatch() *joinBatch { return &joinBatch{op: o, groups: map[string]*joinGroup{}} }

func pick(values []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = values[j]
	}
	return out
}

func (b *joinBatch) add(side int, values []any) error {
	key, k, err := groupKey(values, b.op.keyIdx[side])
	if err != nil {
		return err
	}
	g := b.groups[k.Encoded()]
	if g == nil {
		g = &joinGroup{key: key}
		b.groups[k.Encoded()] = g
		b.order = append(b.order, g)
	}
	g.sides[side] = append(g.sides[side], pick(values, b.op.restIdx[side]))
	return nil
}

// run emits the joined tuples, key by key in the order keys arrived.
func (b *joinBatch) run(emit func([]any) error) error {
	keepLeft := b.op.mode == LeftOuter || b.op.mode == FullOuter
	keepRight := b.op.mode == RightOuter || b.op.mode == FullOuter
	nils := [2][]any{make([]any, len(b.op.restIdx[0])), make([]any, len(b.op.restIdx[1]))}
	for _, g := range b.order {
		left, right := g.sides[0], g.sides[1]
		switch {
		case len(left) > 0 && len(right) > 0:
		case len(left) > 0 && keepLeft:
			right = [][]any{nils[1]}
		case len(right) > 0 && keepRight:
			left = [][]any{nils[0]}
		default:
			continue
		}
		for _, l := range left {
			for _, r := range right {
				out := make([]any, 0, len(g.key)+len(l)+len(r))
				if err := emit(append(append(append(out, g.key...), l...), r...)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
