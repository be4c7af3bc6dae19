package supervisor

import (
	"fmt"
	"time"

	"github.com/squallstream/squall/cluster/meta"
)

// work is what one slot runs.
type work struct {
	Topology, Artifact string
}

func (w work) String() string { return w.Topology + "@" + w.Artifact }

// actionKind names what the shell does for an action.
type actionKind uint8

const (
	// actStopRun cancels the slot's run and has it stop its worker.
	actStopRun actionKind = iota + 1
	// actStopAdopted stops a worker adopted from an earlier run of the
	// supervisor (SIGTERM, SIGKILL after Grace) and removes its pid file;
	// until it has exited it counts as a stopping run of its slot.
	actStopAdopted
	// actStartRun starts a run of Work on the slot: after the slot's
	// previous run has ended if After, taking the adopted worker over
	// (rather than starting one) if Adopt.
	actStartRun
	// actForgetRun drops the ended run of a slot no longer assigned.
	actForgetRun
	// actReport stores Crash, the slot's crash counts, for the leader.
	actReport
	// actBackOff waits Wait before the slot's next start.
	actBackOff
)

// action is one step the shell takes, as the pure cores (planReconcile,
// slotLife) decide it. Only the fields of its kind are set.
type action struct {
	Kind  actionKind
	Port  int
	Work  work
	Quiet bool // actStopRun: the run had ended by itself; nothing to log
	After bool // actStartRun: wait for the slot's previous run to end
	Adopt bool // actStartRun: take the adopted worker over
	Crash meta.Crash
	Wait  time.Duration
}

func (a action) String() string {
	switch a.Kind {
	case actStopRun:
		s := fmt.Sprintf("stop %d %s", a.Port, a.Work)
		if a.Quiet {
			s += " (ended)"
		}
		return s
	case actStopAdopted:
		return fmt.Sprintf("stop-adopted %d %s", a.Port, a.Work)
	case actStartRun:
		s := fmt.Sprintf("start %d %s", a.Port, a.Work)
		if a.After {
			s += " after-previous"
		}
		if a.Adopt {
			s += " adopt"
		}
		return s
	case actForgetRun:
		return fmt.Sprintf("forget %d", a.Port)
	case actReport:
		c := a.Crash
		return fmt.Sprintf("report %s %s failures=%d crashes=%d last=%q", c.Topology, c.Slot, c.Failures, c.Crashes, c.Last)
	case actBackOff:
		return fmt.Sprintf("back-off %v", a.Wait)
	}
	return fmt.Sprintf("action(%d)", a.Kind)
}
