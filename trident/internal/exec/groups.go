package exec

import "github.com/squallstream/squall/state"

// GroupIndex finds the groups of a batch by their key values, in the order
// they first appeared. A key of one scalar value (a word, a room, a
// partition number) is looked up by the value itself, so that the
// per-tuple cost is one map lookup; its state key is built once, when the
// value is first seen. Other keys are looked up by their state key's
// encoding, which is also where two scalar values of different types with
// the same encoding (int 5 and int64 5) meet in one group.
type GroupIndex[G any] struct {
	byString map[string]*G // scalar strings, the commonest key, hashed as strings
	byValue  map[any]*G    // other scalars
	byKey    map[string]*G
	Order    []*G // the groups, in the order they first appeared
}

// NewGroupIndex returns an empty index.
func NewGroupIndex[G any]() GroupIndex[G] {
	return GroupIndex[G]{byString: map[string]*G{}, byValue: map[any]*G{}, byKey: map[string]*G{}}
}

// Find returns the group of values at idx. For a new group it calls
// create with the group values and their state key and records the group
// it returns; created tells which happened.
func (gi *GroupIndex[G]) Find(values []any, idx []int, create func(group []any, key state.Key) (*G, error)) (g *G, created bool, err error) {
	var scalar any
	if len(idx) == 1 {
		if str, ok := values[idx[0]].(string); ok {
			if g := gi.byString[str]; g != nil {
				return g, false, nil
			}
			scalar = str
		} else if isScalar(values[idx[0]]) {
			scalar = values[idx[0]]
			if g := gi.byValue[scalar]; g != nil {
				return g, false, nil
			}
		}
	}
	group, key, err := GroupKey(values, idx)
	if err != nil {
		return nil, false, err
	}
	g = gi.byKey[key.Encoded()]
	if g == nil {
		// The group outlives the tuple, which may be borrowed.
		if g, err = create(Detach(group), key); err != nil {
			return nil, false, err
		}
		gi.byKey[key.Encoded()] = g
		gi.Order = append(gi.Order, g)
		created = true
	}
	switch v := scalar.(type) {
	case nil:
	case string:
		gi.byString[v] = g
	default:
		gi.byValue[v] = g
	}
	return g, created, nil
}

// isScalar reports whether v is a value of a type that is cheap to hash
// and compares equal exactly when its state key does (within one type).
func isScalar(v any) bool {
	switch v.(type) {
	case string, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	}
	return false
}
