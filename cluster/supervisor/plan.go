package supervisor

import (
	"crypto/x509"
	"maps"
	"slices"
	"time"

	"github.com/squallstream/squall/cluster/meta"
)

// This file and slotlife.go are the supervisor's pure core: functions
// from what the shell read (the assignments, its slots' runs, a slot's
// exits, a clock reading) to actions. No goroutine, I/O or clock read
// happens here; supervisor.go and slotrun.go execute the actions.

// assignmentRecord is one key and value read under assignments/.
type assignmentRecord struct {
	Key   string
	Value []byte
}

// trust is how assignments are checked: with Roots, only an assignment a
// nimbus of the cluster signed (verified at Now) is accepted; without, a
// cluster without certificates, any is.
type trust struct {
	Roots *x509.CertPool
	Now   time.Time
}

// refusal is an assignment the supervisor refused: unsigned, or not
// signed by a nimbus of the cluster.
type refusal struct {
	Key string
	Err error
}

// assigned is what the cluster's assignments give one supervisor.
type assigned struct {
	Desired map[int]work     // port → what the slot runs, for the supervisor's own ports
	Epochs  map[string]int64 // topology → epoch, of every accepted assignment
	Skipped []error          // records that do not decode
	Refused []refusal        // assignments that failed the trust check
}

// planAssignments reads every assignment of the cluster for the
// supervisor id with ports. An assignment that fails tr gives the
// supervisor nothing: no slot, no epoch.
func planAssignments(recs []assignmentRecord, id string, ports []int, tr trust) assigned {
	out := assigned{Desired: map[int]work{}, Epochs: map[string]int64{}}
	for _, r := range recs {
		var a meta.Assignment
		if err := meta.Decode(r.Key, r.Value, &a); err != nil {
			out.Skipped = append(out.Skipped, err)
			continue
		}
		if tr.Roots != nil {
			if _, err := a.Verify(tr.Roots, tr.Now); err != nil {
				out.Refused = append(out.Refused, refusal{Key: r.Key, Err: err})
				continue
			}
		}
		out.Epochs[a.Topology] = a.Epoch
		for _, w := range a.Workers {
			if w.Supervisor == id && slices.Contains(ports, w.Port) {
				out.Desired[w.Port] = work{Topology: a.Topology, Artifact: a.Artifact}
			}
		}
	}
	return out
}

// runView is what the shell knows of a slot's run when it reconciles.
type runView struct {
	Work     work
	Stopping bool // asked to stop (actStopRun, actStopAdopted)
	Done     bool // ended: its worker is gone or left running
}

// slotsView is the state of the supervisor's slots: the runs it owns and
// the workers it adopted from an earlier run and has not taken over yet.
type slotsView struct {
	Runs    map[int]runView
	Adopted map[int]work
}

// planReconcile returns the actions that make the slots run desired, in
// order: stop the runs and adopted workers whose slot left the assignment
// or changed work, start a run on every assigned slot that has no live
// one of its work (after the slot's previous worker is gone, so a slot
// never has two), and forget the ended runs of unassigned slots.
func planReconcile(v slotsView, desired map[int]work) []action {
	runs := maps.Clone(v.Runs)
	if runs == nil {
		runs = map[int]runView{}
	}
	adopted := maps.Clone(v.Adopted)
	var acts []action
	for _, port := range slices.Sorted(maps.Keys(runs)) {
		r := runs[port]
		if w, ok := desired[port]; r.Stopping || ok && w == r.Work {
			continue // stopping already, or still assigned
		}
		acts = append(acts, action{Kind: actStopRun, Port: port, Work: r.Work, Quiet: r.Done})
		r.Stopping = true
		runs[port] = r
	}
	for _, port := range slices.Sorted(maps.Keys(adopted)) {
		w := adopted[port]
		if d, ok := desired[port]; ok && d == w {
			continue
		}
		acts = append(acts, action{Kind: actStopAdopted, Port: port, Work: w})
		delete(adopted, port)
		runs[port] = runView{Work: w, Stopping: true}
	}
	for _, port := range slices.Sorted(maps.Keys(desired)) {
		w := desired[port]
		prev, ok := runs[port]
		if ok && prev.Work == w && !prev.Stopping {
			continue
		}
		_, adopt := adopted[port]
		acts = append(acts, action{Kind: actStartRun, Port: port, Work: w, After: ok && !prev.Done, Adopt: adopt})
		delete(adopted, port)
		runs[port] = runView{Work: w}
	}
	for _, port := range slices.Sorted(maps.Keys(v.Runs)) {
		if _, ok := desired[port]; !ok && v.Runs[port].Done {
			acts = append(acts, action{Kind: actForgetRun, Port: port})
		}
	}
	return acts
}
