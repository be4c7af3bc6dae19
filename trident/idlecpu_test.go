package trident

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/squallstream/squall/trident/coordstore/boltstore"
)

// TestIdleCPU measures, in wall-clock time, what an idle topology costs
// with a bbolt coordination store: commits per second and CPU time, with
// the default IdleBatchInterval and with idle batches every
// BatchEmitInterval (the behaviour before IdleBatchInterval). It runs only
// with SQUALL_IDLE_CPU=1 (it takes 20 s):
//
//	SQUALL_IDLE_CPU=1 go test -run TestIdleCPU -v ./trident/
func TestIdleCPU(t *testing.T) {
	if os.Getenv("SQUALL_IDLE_CPU") == "" {
		t.Skip("set SQUALL_IDLE_CPU=1 to measure")
	}
	const span = 10 * time.Second
	for _, c := range []struct {
		name string
		idle time.Duration
	}{{"every BatchEmitInterval", 50 * time.Millisecond}, {"default IdleBatchInterval", 0}} {
		store, err := boltstore.Open(context.Background(), filepath.Join(t.TempDir(), "coord.db"), boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := submit(t, feedTopology("idle-cpu", newFeed()), Config{Store: store, IdleBatchInterval: c.idle})
		time.Sleep(time.Second) // started
		from, cpu0 := r.Committed(), cpuTime(t)
		time.Sleep(span)
		commits, cpu := r.Committed()-from, cpuTime(t)-cpu0
		t.Logf("%s: %.1f commits/s, CPU %v in %v (%.1f%% of a core)", c.name, float64(commits)/span.Seconds(), cpu.Round(time.Millisecond), span, 100*cpu.Seconds()/span.Seconds())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := r.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		store.Close()
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
