package exec

import "github.com/squallstream/squall/state"

// GroupIndex finds the groups of a batch by their key values, in the order
// they first appeared. A key of one scalar value (a word, a room, a
// partition number) is looked up by the value itself, so that the
// per-tuple cost is one map lookup, or for a string one probe of a small
// cache in front of that map (recentStrings); its state key is built once,
// when the value is first seen. Other keys are looked up by their state
// key's encoding, which is also where two scalar values of different types
// with the same encoding (int 5 and uint8 5) meet in one group: the maps
// by value only remember where a value's encoding led.
type GroupIndex[G any] struct {
	recent   recentStrings[G] // in front of byString
	byString map[string]*G    // scalar strings, the commonest key, hashed as strings
	byInt    map[int64]*G     // signed integers of every size, which encode alike
	byValue  map[any]*G       // other scalars
	byKey    map[string]*G
	Order    []*G // the groups, in the order they first appeared
}

// NewGroupIndex returns an empty index.
func NewGroupIndex[G any]() GroupIndex[G] {
	return GroupIndex[G]{recent: newRecentStrings[G](), byString: map[string]*G{}, byInt: map[int64]*G{},
		byValue: map[any]*G{}, byKey: map[string]*G{}}
}

// Reset empties the index for another batch, keeping the storage its
// maps and cache grew to. The groups it held are forgotten, not reused.
func (gi *GroupIndex[G]) Reset() {
	gi.recent.reset()
	clear(gi.byString)
	clear(gi.byInt)
	clear(gi.byValue)
	clear(gi.byKey)
	clear(gi.Order)
	gi.Order = gi.Order[:0]
}

// Find returns the group of values at idx. For a new group it calls
// create with the group values and their state key and records the group
// it returns; created tells which happened.
func (gi *GroupIndex[G]) Find(values []any, idx []int, create func(group []any, key state.Key) (*G, error)) (g *G, created bool, err error) {
	if len(idx) == 1 {
		v := values[idx[0]]
		if s, ok := v.(string); ok && !gi.recent.off {
			if g := gi.recent.find(s); g != nil { // inlined: the commonest case
				return g, false, nil
			}
		}
		if g := gi.scalar(v); g != nil {
			return g, false, nil
		}
	}
	return gi.insert(values, idx, create)
}

// FindString is Find for a key of one string, s, at idx[0] of values
// (idx has one position): the string is given, so the lookup need not
// read it from values. It finds the groups Find does.
func (gi *GroupIndex[G]) FindString(s string, values []any, idx []int, create func(group []any, key state.Key) (*G, error)) (g *G, created bool, err error) {
	if !gi.recent.off {
		if g := gi.recent.find(s); g != nil { // inlined: the commonest case
			return g, false, nil
		}
	}
	if g := gi.byString[s]; g != nil {
		gi.recent.put(s, g)
		return g, false, nil
	}
	return gi.insert(values, idx, create)
}

// scalar returns the group of the one-value key v if v is a scalar seen
// before, else nil.
func (gi *GroupIndex[G]) scalar(v any) *G {
	switch x := v.(type) {
	case string:
		g := gi.byString[x]
		if g != nil {
			gi.recent.put(x, g)
		}
		return g
	case int, int8, int16, int32, int64:
		return gi.byInt[signed(x)]
	}
	if isScalar(v) {
		return gi.byValue[v]
	}
	return nil
}

// insert finds the group of values at idx by its state key, creating it
// if new, and remembers it under a one-value key's value.
func (gi *GroupIndex[G]) insert(values []any, idx []int, create func(group []any, key state.Key) (*G, error)) (g *G, created bool, err error) {
	group, key, err := GroupKey(values, idx)
	if err != nil {
		return nil, false, err
	}
	group = Detach(group) // the group outlives the tuple, which may be borrowed
	g = gi.byKey[key.Encoded()]
	if g == nil {
		if g, err = create(group, key); err != nil {
			return nil, false, err
		}
		gi.byKey[key.Encoded()] = g
		gi.Order = append(gi.Order, g)
		created = true
	}
	if len(idx) == 1 {
		gi.remember(group[0], g)
	}
	return g, created, nil
}

// remember records that the one-value key v leads to group g. insert
// detached v, so a string kept here does not point into a borrowed tuple.
func (gi *GroupIndex[G]) remember(v any, g *G) {
	switch x := v.(type) {
	case string:
		gi.byString[x] = g
		gi.recent.grow(len(gi.byString))
		gi.recent.put(x, g)
	case int, int8, int16, int32, int64:
		gi.byInt[signed(x)] = g
	default:
		if isScalar(v) {
			gi.byValue[v] = g
		}
	}
}

// signed returns a signed integer of any size as an int64 (the state key
// encodes every size the same way).
func signed(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	}
	return v.(int64)
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
