package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/squallstream/squall/failure"
)

// randomFaults is an Injector that, at each call, fails the batch with a
// retryable error with probability retry, or panics (crashing the worker)
// with probability panic, until it has injected limit faults. Seeded, so
// that a failing run can be replayed.
type randomFaults struct {
	mu              sync.Mutex
	rng             *rand.Rand
	retry, panic    float64
	limit           int
	retries, panics int
	onFault         func(kind, where string)
}

func newRandomFaults(seed uint64, retry, panicP float64, limit int) *randomFaults {
	return &randomFaults{rng: rand.New(rand.NewPCG(seed, 0xfa17)), retry: retry, panic: panicP, limit: limit}
}

func (f *randomFaults) Inject(_ context.Context, where string) error {
	f.mu.Lock()
	if f.retries+f.panics >= f.limit {
		f.mu.Unlock()
		return nil
	}
	r := f.rng.Float64()
	switch {
	case r < f.retry:
		f.retries++
		n := f.retries
		f.note("retryable failure", where)
		f.mu.Unlock()
		return failure.Retryable(fmt.Errorf("chaos: retryable failure %d injected in %s", n, where))
	case r < f.retry+f.panic:
		f.panics++
		n := f.panics
		f.note("worker panic", where)
		f.mu.Unlock()
		panic(fmt.Sprintf("chaos: worker panic %d injected in %s", n, where))
	}
	f.mu.Unlock()
	return nil
}

func (f *randomFaults) note(kind, where string) {
	if f.onFault != nil {
		f.onFault(kind, where)
	}
}

// counts returns the faults injected so far.
func (f *randomFaults) counts() (retries, panics int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.retries, f.panics
}
