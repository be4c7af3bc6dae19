package exec

import (
	"fmt"

	"github.com/squallstream/squall/state"
)

// ProjectValues returns the values at idx. Values are never changed once
// emitted, so consecutive positions (the common case: one input field)
// are a view of values, capped so that an append copies, instead of a
// copy.
func ProjectValues(values []any, idx []int) []any {
	if len(idx) > 0 && consecutive(idx) {
		lo, hi := idx[0], idx[0]+len(idx)
		return values[lo:hi:hi]
	}
	return Pick(values, idx)
}

// consecutive reports whether idx counts up by one.
func consecutive(idx []int) bool {
	for i := 1; i < len(idx); i++ {
		if idx[i] != idx[0]+i {
			return false
		}
	}
	return true
}

// Pick returns a copy of the values at idx.
func Pick(values []any, idx []int) []any {
	out := make([]any, len(idx))
	for i, j := range idx {
		out[i] = values[j]
	}
	return out
}

// GroupKey returns the values at idx and their state key; with no group
// fields, the key is state.GlobalKey.
func GroupKey(values []any, idx []int) ([]any, state.Key, error) {
	if len(idx) == 0 {
		return nil, state.GlobalKey(), nil
	}
	group := Pick(values, idx)
	key, err := state.NewKey(group...)
	if err != nil {
		return nil, state.Key{}, fmt.Errorf("trident: group key %v: %w", group, err)
	}
	return group, key, nil
}

// Projection picks the values at some positions of a tuple, as
// ProjectValues does, with the choice between a view and a copy made
// once, when the positions are known, instead of for every tuple.
type Projection struct {
	idx    []int
	lo, hi int  // the view values[lo:hi:hi], when view
	view   bool // idx is consecutive (or empty)
}

// NewProjection returns the projection of the values at idx.
func NewProjection(idx []int) Projection {
	if len(idx) == 0 {
		return Projection{view: true}
	}
	return Projection{idx: idx, lo: idx[0], hi: idx[0] + len(idx), view: consecutive(idx)}
}

// Of returns the values at the projection's positions: a view of values
// (capped, so that an append copies) when they are consecutive, else a
// copy.
func (p *Projection) Of(values []any) []any {
	if p.view {
		return values[p.lo:p.hi:p.hi]
	}
	return Pick(values, p.idx)
}
