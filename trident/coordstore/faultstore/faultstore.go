// Package faultstore wraps a coordstore.Store to inject failures, for
// randomized and crash tests of the code above it, in the manner of
// pebble's errorfs.
//
// An Injector sees every call (its method, whether it writes, its sequence
// number) and chooses a Fault: fail before the call reaches the store, or
// let the call happen and fail afterwards, the case where a write took
// effect but its caller cannot know.
package faultstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/coordstore"
)

// ErrInjected is the cause of every injected fault made by this package's
// injectors; they wrap it with failure.Retryable, as an I/O error would be.
var ErrInjected = errors.New("faultstore: injected fault")

// injected is the error the package's injectors return.
var injected = failure.Retryable(ErrInjected)

// Op describes one call through the wrapper.
type Op struct {
	Method string // the Store method, such as "PutMeta"
	Write  bool   // Acquire, SwapCoordinator, PutMeta, RemoveMeta, CleanupMetaBefore
	Seq    int    // 1 for the first call through the wrapper, and so on
	Writes int    // for a write: 1 for the first write, and so on
}

// Fault is an Injector's decision for one call.
type Fault struct {
	// Err is returned by the call; nil means no fault.
	Err error
	// After lets the call reach the store first and then returns Err
	// instead of its result.
	After bool
}

// Injector decides the fault of each call. It must be safe for concurrent
// use if the store is used concurrently.
type Injector interface {
	Inject(Op) Fault
}

// InjectorFunc adapts a function to an Injector.
type InjectorFunc func(Op) Fault

// Inject calls f.
func (f InjectorFunc) Inject(op Op) Fault { return f(op) }

// FailNth fails the nth call (counting from 1) before it reaches the store.
func FailNth(n int) Injector {
	return InjectorFunc(func(op Op) Fault {
		if op.Seq == n {
			return Fault{Err: injected}
		}
		return Fault{}
	})
}

// FailAfterWrite lets the nth write (counting from 1) reach the store and
// then fails it.
func FailAfterWrite(n int) Injector {
	return InjectorFunc(func(op Op) Fault {
		if op.Write && op.Writes == n {
			return Fault{Err: injected, After: true}
		}
		return Fault{}
	})
}

// Random fails each call with probability p, before or (for writes, half
// of the time) after it reaches the store. The same seed gives the same
// faults for the same sequence of calls.
func Random(seed uint64, p float64) Injector {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return InjectorFunc(func(op Op) Fault {
		mu.Lock()
		defer mu.Unlock()
		if rng.Float64() >= p {
			return Fault{}
		}
		return Fault{Err: injected, After: op.Write && rng.IntN(2) == 0}
	})
}

// Store is a coordstore.Store that injects faults into calls to another.
type Store struct {
	inner  coordstore.Store
	inj    Injector
	seq    atomic.Int64
	writes atomic.Int64
}

var _ coordstore.Store = (*Store)(nil)

// Wrap returns a Store injecting inj's faults into calls to s.
func Wrap(s coordstore.Store, inj Injector) *Store { return &Store{inner: s, inj: inj} }

// Calls returns the number of calls so far.
func (s *Store) Calls() int { return int(s.seq.Load()) }

func (s *Store) fault(method string, write bool) Fault {
	op := Op{Method: method, Write: write, Seq: int(s.seq.Add(1))}
	if write {
		op.Writes = int(s.writes.Add(1))
	}
	return s.inj.Inject(op)
}

// call runs fn under the fault chosen for method.
func call(s *Store, method string, write bool, fn func() error) error {
	f := s.fault(method, write)
	if f.Err != nil && !f.After {
		return f.Err
	}
	if err := fn(); err != nil || f.Err == nil {
		return err
	}
	return f.Err
}

// Acquire implements coordstore.Store.
func (s *Store) Acquire(ctx context.Context, owner string) (g coordstore.Generation, err error) {
	err = call(s, "Acquire", true, func() error {
		g, err = s.inner.Acquire(ctx, owner)
		return err
	})
	if err != nil {
		return 0, err
	}
	return g, nil
}

// Generation implements coordstore.Store.
func (s *Store) Generation(ctx context.Context, owner string) (g coordstore.Generation, err error) {
	err = call(s, "Generation", false, func() error {
		g, err = s.inner.Generation(ctx, owner)
		return err
	})
	if err != nil {
		return 0, err
	}
	return g, nil
}

// LoadCoordinator implements coordstore.Store.
func (s *Store) LoadCoordinator(ctx context.Context, stream string) (r coordstore.Record, v coordstore.Version, err error) {
	err = call(s, "LoadCoordinator", false, func() error {
		r, v, err = s.inner.LoadCoordinator(ctx, stream)
		return err
	})
	if err != nil {
		return coordstore.Record{}, 0, err
	}
	return r, v, nil
}

// SwapCoordinator implements coordstore.Store.
func (s *Store) SwapCoordinator(ctx context.Context, f coordstore.Fence, old coordstore.Version, rec coordstore.Record) (v coordstore.Version, err error) {
	err = call(s, "SwapCoordinator", true, func() error {
		v, err = s.inner.SwapCoordinator(ctx, f, old, rec)
		return err
	})
	if err != nil {
		return 0, err
	}
	return v, nil
}

// GetMeta implements coordstore.Store.
func (s *Store) GetMeta(ctx context.Context, k coordstore.Key, txid state.TxID) (v []byte, ok bool, err error) {
	err = call(s, "GetMeta", false, func() error {
		v, ok, err = s.inner.GetMeta(ctx, k, txid)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return v, ok, nil
}

// PrevMeta implements coordstore.Store.
func (s *Store) PrevMeta(ctx context.Context, k coordstore.Key, txid state.TxID) (e coordstore.Entry, ok bool, err error) {
	err = call(s, "PrevMeta", false, func() error {
		e, ok, err = s.inner.PrevMeta(ctx, k, txid)
		return err
	})
	if err != nil {
		return coordstore.Entry{}, false, err
	}
	return e, ok, nil
}

// PutMeta implements coordstore.Store.
func (s *Store) PutMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid state.TxID, value []byte) error {
	return call(s, "PutMeta", true, func() error { return s.inner.PutMeta(ctx, gen, k, txid, value) })
}

// RemoveMeta implements coordstore.Store.
func (s *Store) RemoveMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid state.TxID) error {
	return call(s, "RemoveMeta", true, func() error { return s.inner.RemoveMeta(ctx, gen, k, txid) })
}

// CleanupMetaBefore implements coordstore.Store.
func (s *Store) CleanupMetaBefore(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid state.TxID) error {
	return call(s, "CleanupMetaBefore", true, func() error { return s.inner.CleanupMetaBefore(ctx, gen, k, txid) })
}

// Close closes the wrapped store; it is never faulted.
func (s *Store) Close() error { return s.inner.Close() }
