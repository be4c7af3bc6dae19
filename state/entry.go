package state

// Entry is one value read from a map, with whether its key was present. A
// present value may itself be a zero value (a nil slice, 0, ""); only Found
// tells presence.
type Entry[V any] struct {
	Val   V
	Found bool
}

// Get returns the value and whether it was found, for comma-ok use.
func (e Entry[V]) Get() (V, bool) { return e.Val, e.Found }
