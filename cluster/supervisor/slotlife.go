package supervisor

import (
	"fmt"
	"time"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/backoff"
)

// exitClass is how the supervisor takes a worker's exit.
type exitClass uint8

const (
	// exitCrashed: any exit the supervisor did not ask for, but those
	// below. It is reported; within MinUptime of the start it is a start
	// failure too.
	exitCrashed exitClass = iota + 1
	// exitSuperseded: a newer worker of the topology took over
	// (meta.ExitSuperseded). Not a crash.
	exitSuperseded
	// exitReassigned: the topology was placed anew (meta.ExitReassigned);
	// the slot's worker starts again after the shortest wait. Not a crash.
	exitReassigned
)

func (c exitClass) String() string {
	switch c {
	case exitCrashed:
		return "crashed"
	case exitSuperseded:
		return "superseded"
	case exitReassigned:
		return "reassigned"
	}
	return fmt.Sprintf("exitClass(%d)", c)
}

// slotLife is the pure core of one slot's run of one work: its crash
// history (the report for the leader) and the backoff between starts,
// from RestartBackoff doubling up to MaxRestartBackoff.
type slotLife struct {
	report    meta.Crash
	waits     backoff.Sequence
	minUptime time.Duration
}

// newSlotLife starts the history of w on slot.
func newSlotLife(slot meta.Slot, w work, restart, maxRestart, minUptime time.Duration) *slotLife {
	return &slotLife{
		report:    meta.Crash{Topology: w.Topology, Slot: slot, Artifact: w.Artifact},
		waits:     backoff.Sequence{Backoff: backoff.Exponential(int64(restart), int64(maxRestart))},
		minUptime: minUptime,
	}
}

// startFailed takes a failure to fetch or launch the worker (msg, at now):
// it is a start failure, reported, and the next start is backed off.
func (l *slotLife) startFailed(msg string, now time.Time) []action {
	l.report.Failures++
	l.report.Last, l.report.Time = msg, now.UTC()
	return []action{{Kind: actReport, Crash: l.report}, {Kind: actBackOff, Wait: time.Duration(l.waits.Next())}}
}

// exited takes the exit of worker pid with code (-1: unknown), started at
// started, seen at now: its class, and the actions that follow. Reports
// carry their time in UTC.
func (l *slotLife) exited(pid, code int, started, now time.Time) (exitClass, []action) {
	var acts []action
	class := exitCrashed
	switch code {
	case meta.ExitSuperseded:
		class = exitSuperseded
	case meta.ExitReassigned:
		class = exitReassigned
		l.waits.Reset()
	default:
		uptime := now.Sub(started)
		l.report.Crashes++
		if uptime < l.minUptime {
			l.report.Failures++
		} else {
			l.report.Failures = 0
			l.waits.Reset()
		}
		l.report.Last = fmt.Sprintf("worker pid %d exited with code %d after %v", pid, code, uptime.Round(time.Millisecond))
		l.report.Time = now.UTC()
		acts = append(acts, action{Kind: actReport, Crash: l.report})
	}
	return class, append(acts, action{Kind: actBackOff, Wait: time.Duration(l.waits.Next())})
}
