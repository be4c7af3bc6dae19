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
