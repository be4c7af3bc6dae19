package kafka

import (
	"context"
	"sync"
)

// goroutines owns the spout's background goroutines (read-ahead fetches
// and the offset mirror): start registers one unless the spout is
// closing, and stop cancels their context and waits for all of them.
type goroutines struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	stopped bool
	wg      sync.WaitGroup
}

func newGoroutines() *goroutines {
	ctx, cancel := context.WithCancel(context.Background())
	return &goroutines{ctx: ctx, cancel: cancel}
}

// start reports whether a goroutine may start; if so, it must call done.
func (g *goroutines) start() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	g.wg.Add(1)
	return true
}

func (g *goroutines) done() { g.wg.Done() }

// stop cancels the goroutines' context and waits for them to return.
func (g *goroutines) stop() {
	g.mu.Lock()
	g.stopped = true
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
}
