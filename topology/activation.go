package topology

import (
	"sync/atomic"

	"github.com/squallstream/squall/internal/notify"
)

// activation is the switch that Running.Activate and Deactivate turn and the
// spout executors follow. Stop must not read the pending count before every
// spout executor has seen the switch turned off: until then a spout in the
// middle of a round may still emit trees the count does not include. So
// each Deactivate numbers itself, and an executor confirms the latest number
// it has seen once it is idle and has published its pending count
// (worker.quiet).
type activation struct {
	on      atomic.Bool
	offs    atomic.Uint64 // Deactivate calls so far
	changed notify.Signal // broadcast at every turn, to end idle waits
}

func (a *activation) set(on bool) {
	if !on {
		a.offs.Add(1)
	}
	a.on.Store(on)
	a.changed.Broadcast()
}
