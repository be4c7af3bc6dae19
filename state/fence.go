package state

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// Generation identifies one owner of a topology. The coordination store
// hands out a greater generation to each new owner (see coordstore's
// Acquire), so of two processes running the same topology the one that
// started later has the greater generation. Zero means "no owner".
type Generation uint64

// String returns the decimal form of the generation.
func (g Generation) String() string { return strconv.FormatUint(uint64(g), 10) }

// Fence names the owner on whose behalf a write is made: the topology and
// its generation. A fenced store rejects (or, for stores ordered by write
// timestamps, outranks) every write of an older generation of the same
// owner once it has seen a newer one.
type Fence struct {
	Owner      string
	Generation Generation
}

// String returns "owner@generation".
func (f Fence) String() string { return f.Owner + "@" + f.Generation.String() }

// ErrFenced is matched by the error of a write made for an owner that a
// newer generation has superseded. It is fatal and final: the superseded
// process must stop writing for good, it must not retry or restart.
var ErrFenced = errors.New("state: superseded by a newer owner")

// FencedError is a write rejected because a newer generation of its owner
// exists.
type FencedError struct {
	Where   string     // what was written, for example a map's name
	Fence   Fence      // the rejected writer
	Current Generation // the newest generation seen
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("state: %s: write of %s rejected: generation %v of %q owns it now (another process took the topology over)",
		e.Where, e.Fence, e.Current, e.Fence.Owner)
}

// Is matches ErrFenced.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }

type fenceKey struct{}

// WithFence returns a context that carries f. The Trident runtime opens
// state and writes it with such a context; a BackingMap that fences reads
// it with FenceOf, at open and on every MultiPut.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceOf returns the fence ctx carries, if any.
func FenceOf(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok && f.Generation > 0
}

// Fencer keeps the newest generation seen per owner, for backing maps
// that fence in memory (Memory, and wrappers in tests). The zero value is
// ready to use and safe for concurrent use.
type Fencer struct {
	mu     sync.Mutex
	newest map[string]Generation
}

// Admit records the fence ctx carries and returns a *FencedError if a
// newer generation of its owner was admitted before. A context without a
// fence is admitted: unfenced callers (tools, tests) are not owners. Call
// it under the same lock as the write it guards, so that no write of an
// older generation lands after a newer one was admitted.
func (f *Fencer) Admit(ctx context.Context, where string) error {
	fc, ok := FenceOf(ctx)
	if !ok {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cur := f.newest[fc.Owner]
	if fc.Generation < cur {
		return &FencedError{Where: where, Fence: fc, Current: cur}
	}
	if f.newest == nil {
		f.newest = map[string]Generation{}
	}
	f.newest[fc.Owner] = fc.Generation
	return nil
}
