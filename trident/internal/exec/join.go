package exec

// JoinPlan is where the keys and other fields of each side of a join
// are, and which unmatched tuples it keeps.
type JoinPlan struct {
	KeepLeft, KeepRight bool // keep left (right) tuples without a match, the other side's values nil
	Keys                int
	KeyIdx              [2][]int
	RestIdx             [2][]int
}

// joinBatch is one batch's join state in one task.
type joinBatch struct {
	op     *JoinPlan
	groups map[string]*joinGroup
	order  []*joinGroup
}

type joinGroup struct {
	key   []any
	sides [2][][]any // the other fields of each side's tuples
}

func (o *JoinPlan) newBatch() *joinBatch { return &joinBatch{op: o, groups: map[string]*joinGroup{}} }

func (b *joinBatch) add(side int, values []any) error {
	key, k, err := GroupKey(values, b.op.KeyIdx[side])
	if err != nil {
		return err
	}
	g := b.groups[k.Encoded()]
	if g == nil {
		g = &joinGroup{key: key}
		b.groups[k.Encoded()] = g
		b.order = append(b.order, g)
	}
	g.sides[side] = append(g.sides[side], Pick(values, b.op.RestIdx[side]))
	return nil
}

// run emits the joined tuples, key by key in the order keys arrived.
func (b *joinBatch) run(emit func([]any) error) error {
	nils := [2][]any{make([]any, len(b.op.RestIdx[0])), make([]any, len(b.op.RestIdx[1]))}
	for _, g := range b.order {
		left, right := g.sides[0], g.sides[1]
		switch {
		case len(left) > 0 && len(right) > 0:
		case len(left) > 0 && b.op.KeepLeft:
			right = [][]any{nils[1]}
		case len(right) > 0 && b.op.KeepRight:
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
