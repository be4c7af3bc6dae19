package monitor

import (
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

// reading is one topology's figures read once, for one scrape, REST
// answer or page: the declared figures' values are read from it.
type reading struct {
	e       *entry
	status  Status
	health  topology.Health
	stats   topology.Stats
	batches Batches // nil for a tuple-level topology

	capWindow *window // the last 10 minutes' growth, read once a bolt needs it
}

// read reads e's figures.
func (e *entry) read() *reading {
	return &reading{e: e, status: e.status(), health: e.t.Health(), stats: e.t.Stats(), batches: e.batches}
}

// capacityWindow returns the 10 minutes' window of the counters'
// growth, computed on first use.
func (r *reading) capacityWindow() *window {
	if r.capWindow == nil {
		w := r.e.windowsAt(r.e.clock.Now(), totalsOf(r.stats, r.batches))[0] // 10m
		r.capWindow = &w
	}
	return r.capWindow
}

// states returns the persistent states' counters; none for a topology
// that has no StateCounter.
func (r *reading) states() []trident.StateStats {
	if c, ok := r.e.t.(StateCounter); ok {
		return c.States()
	}
	return nil
}

// componentReading is one component's figures within a reading.
type componentReading struct {
	top   *reading
	name  string
	stats topology.ComponentStats
}
