package trident

import "sync"

// maxRecycled bounds the emptied batches a node keeps for later ones:
// enough for the batches its tasks have in flight at once, so a batch's
// storage serves again while no more of it is kept than was in use.
const maxRecycled = 8

// recycled is a node's list of emptied batches, shared by its tasks: a
// batch that ends is put here (exec.Recycler) and a new batch taken from
// here, so that the storage a batch grew to is not garbage with every
// batch. Safe for concurrent use.
type recycled[T any] struct {
	mu   sync.Mutex
	free []*T
}

// get returns an emptied batch, or nil if there is none.
func (r *recycled[T]) get() *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.free)
	if n == 0 {
		return nil
	}
	b := r.free[n-1]
	r.free[n-1] = nil
	r.free = r.free[:n-1]
	return b
}

// put keeps emptied batch b for a later get, unless maxRecycled are kept.
func (r *recycled[T]) put(b *T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.free) < maxRecycled {
		r.free = append(r.free, b)
	}
}
