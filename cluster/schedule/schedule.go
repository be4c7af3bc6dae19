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
//  4. Resources: a supervisor may declare a capacity (CPU, memory) and a
//     topology what each of its workers needs (Topology.Worker). A
//     worker is placed, or kept, only on a supervisor with that much
//     free, so no supervisor's capacity is ever exceeded; among the
//     supervisors it fits on, rule 3 picks. A topology that declares
//     resources runs in all of its min(Workers, executors) workers or
//     in none: if they do not all fit it is refused (Result.Refused,
//     an UnfitError naming what is missing) and the slots it held are
//     free for the topologies after it. A topology without resources
//     needs nothing and is placed as before resources existed.
//  5. Executors are spread evenly: every worker of a topology runs
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
	// are free or there are fewer executors (but see Worker).
	Workers int
	// Worker is what each worker needs of its supervisor's capacity; zero
	// (the default) needs nothing. A topology that needs something runs
	// in all its workers or is refused.
	Worker Resources
}

// Supervisor is a live supervisor and the ports of its slots.
type Supervisor struct {
	ID    string
	Ports []int
	// Capacity is what its workers may use together. A zero CPU (or
	// memory) declares no limit on CPU (or memory).
	Capacity Resources
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

// Result is what Decide computes: the next assignment, and the
// topologies refused because their workers do not fit.
type Result struct {
	Assignment Assignment
	Refused    map[string]*UnfitError
}

// Schedule computes the next assignment (Decide without the refusals).
func Schedule(in Input) Assignment { return Decide(in).Assignment }

// Decide computes the next assignment and the refusals. A refused
// topology gives back the slots it held, which the topologies before it
// (in ID order) could not see free in the same pass: Decide schedules
// its own output again until nothing changes (at most once per
// topology), so that its result is a fixed point and Schedule stays
// idempotent.
func Decide(in Input) Result {
	res := decideOnce(in)
	for range len(in.Topologies) {
		if len(res.Refused) == 0 {
			break
		}
		next := in
		next.Current = res.Assignment
		again := decideOnce(next)
		if equalAssignments(again.Assignment, res.Assignment) {
			break
		}
		res = again
	}
	return res
}

func equalAssignments(a, b Assignment) bool {
	return maps.EqualFunc(a, b, func(x, y Placement) bool { return maps.Equal(x, y) })
}

func decideOnce(in Input) Result {
	caps := newCapacities(in.Supervisors)
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
		for _, s := range byLoad(kept[t.ID]) { // a kept worker must still fit
			if !caps.fits(s.Supervisor, t.Worker) {
				delete(kept[t.ID], s)
				continue
			}
			caps.take(s.Supervisor, t.Worker)
		}
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
	out := Result{Assignment: Assignment{}, Refused: map[string]*UnfitError{}}
	for _, t := range topos {
		p, err := place(t, execs[t.ID], kept[t.ID], free, perSupervisor, caps)
		if err != nil {
			out.Refused[t.ID] = err
		}
		if len(p) > 0 {
			out.Assignment[t.ID] = p
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
// free slots, where its workers fit, as it grows (updating free,
// perSupervisor and caps). A topology that needs resources and cannot
// get all its workers gives back every slot and returns an UnfitError.
func place(t Topology, execs []Executor, kept map[Slot][]Executor, free map[Slot]bool, perSupervisor map[string]int,
	caps *capacities) (Placement, *UnfitError) {
	want := min(max(t.Workers, 0), len(execs))
	n := min(want, len(kept)+len(free))
	if !t.Worker.IsZero() {
		n = want // all or none
	}
	if n <= 0 {
		return nil, nil
	}
	workers := byLoad(kept) // len(kept) <= n: keep trimmed them
	for len(workers) < n {
		s, ok := takeFree(free, perSupervisor, func(s Slot) bool { return caps.fits(s.Supervisor, t.Worker) })
		if !ok {
			err := unfit(t, want, len(workers), free, caps)
			for _, s := range workers { // give everything back
				free[s] = true
				perSupervisor[s.Supervisor]--
				caps.release(s.Supervisor, t.Worker)
			}
			return nil, err
		}
		workers = append(workers, s) // new workers run nothing yet: last
		perSupervisor[s.Supervisor]++
		caps.take(s.Supervisor, t.Worker)
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
	return p, nil
}

// unfit describes why topology t got only placed of its want workers.
func unfit(t Topology, want, placed int, free map[Slot]bool, caps *capacities) *UnfitError {
	err := &UnfitError{Topology: t.ID, Workers: want, Need: t.Worker, Placed: placed, NoSlot: true}
	for s := range free {
		f := caps.free(s.Supervisor, t.Worker)
		if err.NoSlot {
			err.MostFree, err.NoSlot = f, false
			continue
		}
		err.MostFree = Resources{CPU: max(err.MostFree.CPU, f.CPU), MemoryMB: max(err.MostFree.MemoryMB, f.MemoryMB)}
	}
	return err
}

// takeFree removes and returns the free slot, among those fits accepts,
// on the supervisor running the fewest workers (ties: supervisor ID),
// lowest port first; false if fits accepts none.
func takeFree(free map[Slot]bool, perSupervisor map[string]int, fits func(Slot) bool) (Slot, bool) {
	var best Slot
	found := false
	for s := range free {
		if !fits(s) {
			continue
		}
		if !found || perSupervisor[s.Supervisor] < perSupervisor[best.Supervisor] ||
			(perSupervisor[s.Supervisor] == perSupervisor[best.Supervisor] && compareSlots(s, best) < 0) {
			best, found = s, true
		}
	}
	if found {
		delete(free, best)
	}
	return best, found
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
