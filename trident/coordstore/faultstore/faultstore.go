// Package faultstore wraps a coordstore.Store to inject failures, for
// randomized and crash tests of the code above it, in the manner of
// pebble's errorfs.
//
// An Injector sees every call (its method, what it is about, whether it
// writes, its sequence number) and chooses a Fault: fail before the call reaches the store, or
// let the call happen and fail afterwards, the case where a write took
// effect but its caller cannot know.
package faultstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/sim"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
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

	// Subject is what the call is about: the owner (Acquire, Generation),
	// the stream (coordinator calls), or the stream, partition and txid
	// (metadata calls).
	Subject string
	// Repeat counts the earlier calls of the same method on the same
	// subject. Unlike Seq, it does not depend on the order in which
	// concurrent callers reach the wrapper.
	Repeat int
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
// of the time) after it reaches the store. The decision depends on the seed
// and on the call's method, subject and repeat count only, so the same seed
// gives the same faults to the same calls in whatever order concurrent
// callers make them.
func Random(seed uint64, p float64) Injector {
	plan := sim.NewPlan(seed)
	return InjectorFunc(func(op Op) Fault {
		id := []uint64{sim.String(op.Subject), uint64(op.Repeat)}
		if !plan.Chance(p, op.Method, id...) {
			return Fault{}
		}
		return Fault{Err: injected, After: op.Write && plan.IntN(2, op.Method+" after", id...) == 0}
	})
}

// Store is a coordstore.Store that injects faults into calls to another.
type Store struct {
	inner   coordstore.Store
	inj     Injector
	seq     atomic.Int64
	writes  atomic.Int64
	repeats sim.Calls // by method and subject
}

var _ coordstore.Store = (*Store)(nil)

// Wrap returns a Store injecting inj's faults into calls to s.
func Wrap(s coordstore.Store, inj Injector) *Store { return &Store{inner: s, inj: inj} }

// Calls returns the number of calls so far.
func (s *Store) Calls() int { return int(s.seq.Load()) }

func (s *Store) fault(method, subject string, write bool) Fault {
	op := Op{Method: method, Write: write, Seq: int(s.seq.Add(1)), Subject: subject}
	if write {
		op.Writes = int(s.writes.Add(1))
	}
	op.Repeat = int(s.repeats.Next(method + "\x00" + subject))
	return s.inj.Inject(op)
}

// metaSubject is the subject of a metadata call.
func metaSubject(k coordstore.Key, txid txn.TxID) string {
	return fmt.Sprintf("%s/%s/%s@%d", k.Owner, k.Stream, k.Partition, txid)
}

// call runs fn under the fault chosen for method on subject.
func call(s *Store, method, subject string, write bool, fn func() error) error {
	f := s.fault(method, subject, write)
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
	err = call(s, "Acquire", owner, true, func() error {
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
	err = call(s, "Generation", owner, false, func() error {
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
	err = call(s, "LoadCoordinator", stream, false, func() error {
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
	err = call(s, "SwapCoordinator", fmt.Sprintf("%s@%d", f.Owner, old), true, func() error {
		v, err = s.inner.SwapCoordinator(ctx, f, old, rec)
		return err
	})
	if err != nil {
		return 0, err
	}
	return v, nil
}

// GetMeta implements coordstore.Store.
func (s *Store) GetMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) (v []byte, ok bool, err error) {
	err = call(s, "GetMeta", metaSubject(k, txid), false, func() error {
		v, ok, err = s.inner.GetMeta(ctx, k, txid)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return v, ok, nil
}

// PrevMeta implements coordstore.Store.
func (s *Store) PrevMeta(ctx context.Context, k coordstore.Key, txid txn.TxID) (e coordstore.Entry, ok bool, err error) {
	err = call(s, "PrevMeta", metaSubject(k, txid), false, func() error {
		e, ok, err = s.inner.PrevMeta(ctx, k, txid)
		return err
	})
	if err != nil {
		return coordstore.Entry{}, false, err
	}
	return e, ok, nil
}

// PutMeta implements coordstore.Store.
func (s *Store) PutMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID, value []byte) error {
	return call(s, "PutMeta", metaSubject(k, txid), true, func() error { return s.inner.PutMeta(ctx, gen, k, txid, value) })
}

// RemoveMeta implements coordstore.Store.
func (s *Store) RemoveMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	return call(s, "RemoveMeta", metaSubject(k, txid), true, func() error { return s.inner.RemoveMeta(ctx, gen, k, txid) })
}

// CleanupMetaBefore implements coordstore.Store.
func (s *Store) CleanupMetaBefore(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid txn.TxID) error {
	return call(s, "CleanupMetaBefore", metaSubject(k, txid), true, func() error { return s.inner.CleanupMetaBefore(ctx, gen, k, txid) })
}

// Close closes the wrapped store; it is never faulted.
func (s *Store) Close() error { return s.inner.Close() }
