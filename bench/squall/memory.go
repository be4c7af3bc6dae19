package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/squallstream/squall/topology"
)

func runAckerMemory(ctx context.Context, o options) (string, error) {
	p := &probe{}
	cfg := topology.DefaultConfig() // one acker
	cfg.DisableTimeouts = true
	cfg.BatchSize = o.batch
	c, err := submitCore(p, limited, int64(o.trees), false, 1, cfg)
	if err != nil {
		return "", err
	}
	figures, err := measureHeap(ctx, o, p)
	// The trees never complete: Shutdown waits for them until its context
	// ends, then stops the topology anyway and says so.
	stop, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if serr := c.Shutdown(stop); serr != nil && !errors.Is(serr, context.DeadlineExceeded) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return "", err
	}
	return figures, nil
}

func measureHeap(ctx context.Context, o options, p *probe) (string, error) {
	if err := waitFor(ctx, time.Minute, "the spout to open", p.opened.Load); err != nil {
		return "", err
	}
	if err := sleep(ctx, settle(o)); err != nil {
		return "", err
	}
	before := liveHeap()
	p.start.Store(true)
	want := int64(o.trees - o.trees%publishEvery)
	what := fmt.Sprintf("%d tuples at the sink", o.trees)
	if err := waitFor(ctx, 5*time.Minute, what, func() bool { return p.sunk.Load() >= want }); err != nil {
		return "", err
	}
	if err := sleep(ctx, settle(o)); err != nil { // let the acker take the last inits
		return "", err
	}
	after := liveHeap()
	return fmt.Sprintf("pending=%d bytes_per_tree=%.1f heap_before=%d heap_after=%d",
		o.trees, float64(after-before)/float64(o.trees), before, after), nil
}

// settle is the pause before each heap reading: 2 s, as on the Storm side,
// less for tiny test windows.
func settle(o options) time.Duration { return min(2*time.Second, o.window) }

// liveHeap returns the bytes of live heap objects after full collections,
// the smallest of three readings (the Storm side reads the JVM's heap in use
// after System.gc the same way).
func liveHeap() int64 {
	var least uint64
	for i := range 3 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if i == 0 || m.HeapAlloc < least {
			least = m.HeapAlloc
		}
	}
	return int64(least)
}
