package trident

import "github.com/squallstream/squall/state"

// groupIndex finds the groups of a batch by their key values, in the order
// they first appeared. A key of one string (a word, a room) is looked up
// by the string itself, so that the per-tuple cost is one map lookup; its
// state key is built once, when the group is new. Other keys are looked up
// by their state key's encoding.
type groupIndex[G any] struct {
	byString map[string]*G
	byKey    map[string]*G
	order    []*G
}

func newGroupIndex[G any]() groupIndex[G] {
	return groupIndex[G]{byString: map[string]*G{}, byKey: map[string]*G{}}
}

// find returns the group of values at idx. For a new group it calls
// create with the group values and their state key and records the group
// it returns; created tells which happened.
func (gi *groupIndex[G]) find(values []any, idx []int, create func(group []any, key state.Key) (*G, error)) (g *G, created bool, err error) {
	if len(idx) == 1 {
		if s, ok := values[idx[0]].(string); ok {
			if g := gi.byString[s]; g != nil {
				return g, false, nil
			}
			g, err := gi.add(values, idx, create)
			if err == nil {
				gi.byString[s] = g
			}
			return g, true, err
		}
	}
	group, key, err := groupKey(values, idx)
	if err != nil {
		return nil, false, err
	}
	if g := gi.byKey[key.Encoded()]; g != nil {
		return g, false, nil
	}
	g, err = create(group, key)
	if err != nil {
		return nil, false, err
	}
	gi.byKey[key.Encoded()] = g
	gi.order = append(gi.order, g)
	return g, true, nil
}

func (gi *groupIndex[G]) add(values []any, idx []int, create func(group []any, key state.Key) (*G, error)) (*G, error) {
	group, key, err := groupKey(values, idx)
	if err != nil {
		return nil, err
	}
	g, err := create(group, key)
	if err != nil {
		return nil, err
	}
	gi.order = append(gi.order, g)
	return g, nil
}
