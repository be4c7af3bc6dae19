package statetest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
)

// ErrInjected is the cause of the faults made by Retryable.
var ErrInjected = errors.New("statetest: injected fault")

// Op is a backing map operation.
type Op uint8

// Operations of a backing map.
const (
	OpGet Op = iota + 1
	OpPut
	OpDelete
)

func (o Op) String() string {
	switch o {
	case OpGet:
		return "get"
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	default:
		return fmt.Sprintf("op(%d)", uint8(o))
	}
}

// Fault is what one injected failure does. The zero Fault is no failure.
type Fault struct {
	// Err is returned by the call; nil means the call is not faulted.
	Err error
	// Written applies to puts and deletes: the first Written keys of the
	// call (in call order, clamped to its length) are written to (deleted
	// from) the wrapped map before Err is returned, as a store that fails
	// halfway would leave them.
	Written int
}

// Retryable returns a fault failing with a retryable ErrInjected after
// writing the first written keys of a put.
func Retryable(written int) Fault {
	return Fault{Err: failure.Retryable(ErrInjected), Written: written}
}

// Rule decides the fault of each call. call numbers the calls of op from 1.
type Rule func(op Op, call int, keys []state.Key) Fault

// FailCall returns a rule that faults only call number call of op.
func FailCall(op Op, call int, f Fault) Rule {
	return func(o Op, c int, _ []state.Key) Fault {
		if o == op && c == call {
			return f
		}
		return Fault{}
	}
}

// FaultMap wraps a backing map and injects faults chosen by a Rule or armed
// with FailNext. It is safe for concurrent use if the wrapped map is.
type FaultMap[V any] struct {
	m state.BackingMap[V]

	mu    sync.Mutex
	rule  Rule
	next  map[Op]Fault
	calls map[Op]int
}

// NewFaultMap wraps m. A nil rule injects nothing until SetRule or
// FailNext.
func NewFaultMap[V any](m state.BackingMap[V], rule Rule) *FaultMap[V] {
	return &FaultMap[V]{m: m, rule: rule, next: make(map[Op]Fault), calls: make(map[Op]int)}
}

// SetRule replaces the rule.
func (f *FaultMap[V]) SetRule(r Rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rule = r
}

// FailNext arms fault for the next call of op only; it takes precedence
// over the rule.
func (f *FaultMap[V]) FailNext(op Op, fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next[op] = fault
}

// Disarm drops armed faults and the rule.
func (f *FaultMap[V]) Disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rule = nil
	clear(f.next)
}

// Calls returns how many calls of op reached the map.
func (f *FaultMap[V]) Calls(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

func (f *FaultMap[V]) fault(op Op, keys []state.Key) Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	if flt, ok := f.next[op]; ok {
		delete(f.next, op)
		return flt
	}
	if f.rule != nil {
		return f.rule(op, f.calls[op], keys)
	}
	return Fault{}
}

// MultiGet fails if a fault is due, else reads the wrapped map.
func (f *FaultMap[V]) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[V], error) {
	if flt := f.fault(OpGet, keys); flt.Err != nil {
		return nil, flt.Err
	}
	return f.m.MultiGet(ctx, keys)
}

// MultiPut writes the first Fault.Written keys and fails if a fault is
// due, else writes all keys.
func (f *FaultMap[V]) MultiPut(ctx context.Context, keys []state.Key, vals []V) error {
	if len(keys) != len(vals) {
		return state.ErrLength
	}
	flt := f.fault(OpPut, keys)
	if flt.Err == nil {
		return f.m.MultiPut(ctx, keys, vals)
	}
	n := min(max(flt.Written, 0), len(keys))
	if n > 0 {
		if err := f.m.MultiPut(ctx, keys[:n], vals[:n]); err != nil {
			return errors.Join(flt.Err, err)
		}
	}
	return flt.Err
}

// MultiDelete deletes the first Fault.Written keys and fails if a fault
// is due, else deletes all keys. If the wrapped map is not a
// state.Deleter it returns state.ErrNoDelete, as every wrapper does.
func (f *FaultMap[V]) MultiDelete(ctx context.Context, keys []state.Key) error {
	d, ok := f.m.(state.Deleter)
	if !ok {
		return fmt.Errorf("%w: %s", state.ErrNoDelete, state.NameOf(f.m))
	}
	flt := f.fault(OpDelete, keys)
	if flt.Err == nil {
		return d.MultiDelete(ctx, keys)
	}
	n := min(max(flt.Written, 0), len(keys))
	if n > 0 {
		if err := d.MultiDelete(ctx, keys[:n]); err != nil {
			return errors.Join(flt.Err, err)
		}
	}
	return flt.Err
}

// CanDelete implements state.DeleteForwarder: whether the wrapped map can
// delete.
func (f *FaultMap[V]) CanDelete() bool { return state.CanDelete(f.m) }

// Name returns the wrapped map's name.
func (f *FaultMap[V]) Name() string { return state.NameOf(f.m) }

// ConcurrentSafe forwards the wrapped map's answer.
func (f *FaultMap[V]) ConcurrentSafe() bool { return state.IsConcurrent(f.m) }

// Close closes the wrapped map if it can be closed.
func (f *FaultMap[V]) Close() error { return state.Close(f.m) }
