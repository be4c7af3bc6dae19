// Package schedule is the pure core of nimbus's scheduler: given the
// topologies to run, the live supervisors with their slots, and the current
// assignment, it computes the next assignment. It knows nothing about etcd,
// processes or clocks, and is deterministic: the same Input always gives
// the same Assignment.
//
// The rules, in the order they are applied to each topology (topologies in
// ID order, so that an earlier topology wins a contested slot):
//
//  1. A worker is one slot (supervisor, port) running one topology's
//     executors. A slot runs at most one worker.
//  2. A topology keeps the slots it holds when their supervisor is alive,
//     the port is one of the supervisor's, and no earlier topology took the
//     slot. Slots of dead supervisors are never used.
//  3. It runs in min(Workers, executors, kept + free slots) workers. A
//     topology holding more workers than min(Workers, executors) drops those
//     with the fewest executors first, and the dropped slots become free.
//     Slots kept by another topology are never free: a topology grows only
//     into unused slots, taking them on the supervisors running the fewest
//     workers (cluster-wide) first.
//  4. Executors are spread evenly: every worker of a topology runs
//     ⌊E/n⌋ or ⌈E/n⌉ executors. The workers that already run the most
//     executors get the ⌈E/n⌉ places, and each keeps as many of its
//     executors as fit, so executors move only when they must.
//
// Schedule is idempotent: scheduling its own output again, with the same
// topologies and supervisors, changes nothing.
package schedule

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// Executor is a run of a component's tasks, [First, Last], run by one
// executor (Storm's executor id).
type Executor struct {
	Component   string
	First, Last int
}

func (e Executor) String() string { return fmt.Sprintf("%s[%d-%d]", e.Component, e.First, e.Last) }

func compareExecutors(a, b Executor) int {
	return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.First, b.First), cmp.Compare(a.Last, b.Last))
}

// Slot is one worker place: a port on a supervisor.
type Slot struct {
	Supervisor string
	Port       int
}

func (s Slot) String() string { return fmt.Sprintf("%s:%d", s.Supervisor, s.Port) }

func compareSlots(a, b Slot) int {
	return cmp.Or(cmp.Compare(a.Supervisor, b.Supervisor), cmp.Compare(a.Port, b.Port))
}

// Topology is one topology to run.
type Topology struct {
	ID        string
	Executors []Executor
	// Workers is the desired number of workers; fewer run when fewer slots
	// are free or there are fewer executors.
	Workers int
}

// Supervisor is a live supervisor and the ports of its slots.
type Supervisor struct {
	ID    string
	Ports []int
}

// Placement maps each executor of one topology to the slot of its worker.
type Placement map[Executor]Slot

// Assignment maps topology IDs to placements. A topology that could get no
// slot is absent.
type Assignment map[string]Placement

// Input is what Schedule works from.
type Input struct {
	Topologies  []Topology
	Supervisors []Supervisor // the live ones
	Current     Assignment
}

// Schedule computes the next assignment.
func Schedule(in Input) Assignment {
	live := map[Slot]bool{}
	perSupervisor := map[string]int{} // workers placed on each supervisor so far
	for _, s := range in.Supervisors {
		perSupervisor[s.ID] = 0
		for _, p := range s.Ports {
			live[Slot{s.ID, p}] = true
		}
	}

	topos := slices.Clone(in.Topologies)
	slices.SortFunc(topos, func(a, b Topology) int { return cmp.Compare(a.ID, b.ID) })

	// Pass 1: the workers each topology keeps. A contested slot belongs to
	// the first topology (ID order) holding it; a topology holding more
	// workers than it may run drops those with the fewest executors.
	holder := map[Slot]string{}
	for _, t := range topos {
		for _, s := range in.Current[t.ID] {
			if _, taken := holder[s]; !taken && live[s] {
				holder[s] = t.ID
			}
		}
	}
	execs := map[string][]Executor{}
	kept := map[string]map[Slot][]Executor{}
	for _, t := range topos {
		execs[t.ID] = sortedExecutors(t.Executors)
		kept[t.ID] = keep(t, execs[t.ID], in.Current[t.ID], holder)
	}
	free := map[Slot]bool{}
	for s := range live {
		free[s] = true
	}
	for _, k := range kept {
		for s := range k {
			delete(free, s)
			perSupervisor[s.Supervisor]++
		}
	}

	// Pass 2: each topology grows into free slots and spreads its executors.
	out := Assignment{}
	for _, t := range topos {
		if p := place(t, execs[t.ID], kept[t.ID], free, perSupervisor); len(p) > 0 {
			out[t.ID] = p
		}
	}
	return out
}

func sortedExecutors(es []Executor) []Executor {
	es = slices.Clone(es)
	slices.SortFunc(es, compareExecutors)
	return slices.CompactFunc(es, func(a, b Executor) bool { return a == b })
}

// keep returns the workers topology t keeps, with the executors of t each
// runs now (sorted), at most min(Workers, executors) of them.
func keep(t Topology, execs []Executor, cur Placement, holder map[Slot]string) map[Slot][]Executor {
	wanted := map[Executor]bool{}
	for _, e := range execs {
		wanted[e] = true
	}
	kept := map[Slot][]Executor{}
	for e, s := range cur {
		if holder[s] != t.ID {
			continue
		}
		if wanted[e] {
			kept[s] = append(kept[s], e)
		} else if _, ok := kept[s]; !ok {
			kept[s] = nil
		}
	}
	for _, es := range kept {
		slices.SortFunc(es, compareExecutors)
	}
	workers := byLoad(kept)
	for _, s := range workers[min(max(t.Workers, 0), len(execs), len(workers)):] {
		delete(kept, s)
	}
	return kept
}

// byLoad lists the workers, most executors first, slot order breaking ties.
func byLoad(kept map[Slot][]Executor) []Slot {
	workers := slices.Collect(maps.Keys(kept))
	slices.SortFunc(workers, func(a, b Slot) int {
		return cmp.Or(cmp.Compare(len(kept[b]), len(kept[a])), compareSlots(a, b))
	})
	return workers
}

// place computes one topology's placement from its kept workers, taking
// free slots as it grows (updating free and perSupervisor).
func place(t Topology, execs []Executor, kept map[Slot][]Executor, free map[Slot]bool, perSupervisor map[string]int) Placement {
	n := min(t.Workers, len(execs), len(kept)+len(free))
	if n <= 0 {
		return nil
	}
	workers := byLoad(kept) // len(kept) <= n: keep trimmed them
	for len(workers) < n {
		s := takeFree(free, perSupervisor)
		workers = append(workers, s) // new workers run nothing yet: last
		perSupervisor[s.Supervisor]++
	}

	// Capacities: the first E mod n workers (the most loaded) get one more.
	capacity := map[Slot]int{}
	for i, s := range workers {
		capacity[s] = len(execs) / n
		if i < len(execs)%n {
			capacity[s]++
		}
	}
	p := Placement{}
	for _, s := range workers {
		for _, e := range kept[s] {
			if capacity[s] == 0 {
				break
			}
			p[e] = s
			capacity[s]--
		}
	}
	slices.SortFunc(workers, compareSlots)
	i := 0
	for _, e := range execs {
		if _, done := p[e]; done {
			continue
		}
		for capacity[workers[i]] == 0 {
			i++
		}
		p[e] = workers[i]
		capacity[workers[i]]--
	}
	return p
}

// takeFree removes and returns the free slot on the supervisor running the
// fewest workers (ties: supervisor ID), lowest port first.
func takeFree(free map[Slot]bool, perSupervisor map[string]int) Slot {
	var best Slot
	found := false
	for s := range free {
		if !found || perSupervisor[s.Supervisor] < perSupervisor[best.Supervisor] ||
			(perSupervisor[s.Supervisor] == perSupervisor[best.Supervisor] && compareSlots(s, best) < 0) {
			best, found = s, true
		}
	}
	delete(free, best)
	return best
}

// Moved counts the executors of old that run on another slot, or not at
// all, in next: the work a new assignment moves.
func Moved(old, next Assignment) int {
	n := 0
	for id, p := range old {
		for e, s := range p {
			if ns, ok := next[id][e]; !ok || ns != s {
				n++
			}
		}
	}
	return n
}
