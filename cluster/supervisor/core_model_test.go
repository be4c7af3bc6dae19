package supervisor

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// slotsModel plays the shell for the pure core in tests: it applies the
// actions of planReconcile to a simple model of the slots, refusing any
// the shell could not execute, and tracks every run of a slot (the shell
// keeps only the latest, whose predecessors it waits for).
type slotsModel struct {
	runs    map[int][]*modelRun // a slot's runs, oldest first
	adopted map[int]work        // workers adopted and not taken over
}

// modelRun is one run of a slot.
type modelRun struct {
	work     work
	stopping bool
	done     bool
	blocked  *modelRun // the run it waits for before it runs (After)
	adopted  bool      // it took an adopted worker over
	life     *slotLife
}

func newSlotsModel(adopted map[int]work) *slotsModel {
	m := &slotsModel{runs: map[int][]*modelRun{}, adopted: map[int]work{}}
	maps.Copy(m.adopted, adopted)
	return m
}

func (m *slotsModel) latest(port int) *modelRun {
	if rs := m.runs[port]; len(rs) > 0 {
		return rs[len(rs)-1]
	}
	return nil
}

// view is what the shell would pass to planReconcile.
func (m *slotsModel) view() slotsView {
	v := slotsView{Runs: map[int]runView{}, Adopted: maps.Clone(m.adopted)}
	for port := range m.runs {
		if r := m.latest(port); r != nil {
			v.Runs[port] = runView{Work: r.work, Stopping: r.stopping, Done: r.done}
		}
	}
	return v
}

// apply executes acts as the shell would; newLife makes a started run's
// history.
func (m *slotsModel) apply(acts []action, newLife func(int, work) *slotLife) error {
	for _, a := range acts {
		r := m.latest(a.Port)
		switch a.Kind {
		case actStopRun:
			if r == nil {
				return fmt.Errorf("%s: no run", a)
			}
			if a.Quiet != r.done {
				return fmt.Errorf("%s: quiet is %v for a run done=%v", a, a.Quiet, r.done)
			}
			r.stopping = true
		case actStopAdopted:
			w, ok := m.adopted[a.Port]
			if !ok || w != a.Work {
				return fmt.Errorf("%s: no such adopted worker", a)
			}
			delete(m.adopted, a.Port)
			m.runs[a.Port] = append(m.runs[a.Port], &modelRun{work: w, stopping: true})
		case actStartRun:
			n := &modelRun{work: a.Work}
			if a.After {
				if r == nil {
					return fmt.Errorf("%s: no previous run", a)
				}
				n.blocked = r
			}
			if a.Adopt {
				if w, ok := m.adopted[a.Port]; !ok || w != a.Work {
					return fmt.Errorf("%s: no adopted worker of that work", a)
				}
				delete(m.adopted, a.Port)
				n.adopted = true
			}
			if newLife != nil {
				n.life = newLife(a.Port, a.Work)
			}
			m.runs[a.Port] = append(m.runs[a.Port], n)
		case actForgetRun:
			if r == nil || !r.done {
				return fmt.Errorf("%s: the run has not ended", a)
			}
			delete(m.runs, a.Port)
		default:
			return fmt.Errorf("%s: not a reconcile action", a)
		}
	}
	return nil
}

// running reports whether r may have a worker alive: not done, and
// either no longer waiting for its predecessor or holding an adopted one.
func (r *modelRun) running() bool {
	return !r.done && (r.blocked == nil || r.blocked.done || r.adopted)
}

// finish ends the oldest stopping run of port that can end (its
// predecessor is done), as its goroutine would; it reports whether one did.
func (m *slotsModel) finish(port int) bool {
	for _, r := range m.runs[port] {
		if r.stopping && !r.done && (r.blocked == nil || r.blocked.done) {
			r.done = true
			return true
		}
	}
	return false
}

// workers counts the workers slot port may have alive at once.
func (m *slotsModel) workers(port int) int {
	n := 0
	if _, ok := m.adopted[port]; ok {
		n++
	}
	for _, r := range m.runs[port] {
		if r.running() {
			n++
		}
	}
	return n
}

func (m *slotsModel) String() string {
	var b strings.Builder
	ports := slices.Sorted(maps.Keys(m.runs))
	for _, p := range slices.Sorted(maps.Keys(m.adopted)) {
		if _, ok := m.runs[p]; !ok {
			ports = append(ports, p)
		}
	}
	slices.Sort(ports)
	for _, port := range ports {
		fmt.Fprintf(&b, "%d:", port)
		if w, ok := m.adopted[port]; ok {
			fmt.Fprintf(&b, " adopted %s;", w)
		}
		for _, r := range m.runs[port] {
			fmt.Fprintf(&b, " run %s", r.work)
			for _, f := range []struct {
				on   bool
				name string
			}{{r.stopping, "stopping"}, {r.done, "done"}, {r.blocked != nil && !r.blocked.done, "waiting"}, {r.adopted, "adopted"}} {
				if f.on {
					b.WriteString(" " + f.name)
				}
			}
			b.WriteString(";")
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
