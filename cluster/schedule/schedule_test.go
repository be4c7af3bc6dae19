package schedule

import (
	"fmt"
	"maps"
	"testing"

	"pgregory.net/rapid"
)

// genInput draws a cluster: supervisors with a few slots, topologies with
// executors and desired workers, and a current assignment drawn as an
// earlier schedule on another set of supervisors (so it may name dead ones)
// with some placements scrambled.
func genInput(t *rapid.T) Input {
	nSup := rapid.IntRange(0, 6).Draw(t, "supervisors")
	var sups []Supervisor
	for i := range nSup {
		ports := rapid.SliceOfNDistinct(rapid.IntRange(6700, 6705), 0, 4, rapid.ID[int]).Draw(t, fmt.Sprintf("ports%d", i))
		sups = append(sups, Supervisor{ID: fmt.Sprintf("s%d", i), Ports: ports})
	}
	nTopo := rapid.IntRange(0, 4).Draw(t, "topologies")
	var topos []Topology
	for i := range nTopo {
		var execs []Executor
		for c := range rapid.IntRange(1, 3).Draw(t, "components") {
			task := 1
			for range rapid.IntRange(1, 5).Draw(t, "executors") {
				width := rapid.IntRange(1, 3).Draw(t, "tasks")
				execs = append(execs, Executor{fmt.Sprintf("c%d", c), task, task + width - 1})
				task += width
			}
		}
		topos = append(topos, Topology{ID: fmt.Sprintf("t%d", i), Executors: execs,
			Workers: rapid.IntRange(0, 6).Draw(t, "workers")})
	}
	// The current assignment: an earlier schedule over the live supervisors
	// plus some that died since, then a few executors moved anywhere.
	old := slicesClone(sups)
	for i := range rapid.IntRange(0, 2).Draw(t, "dead") {
		old = append(old, Supervisor{ID: fmt.Sprintf("dead%d", i), Ports: []int{6700, 6701}})
	}
	var cur Assignment
	if rapid.Bool().Draw(t, "fresh") {
		cur = Assignment{}
	} else {
		cur = Schedule(Input{Topologies: topos, Supervisors: old})
	}
	for id, p := range cur {
		for e := range p {
			if rapid.IntRange(0, 9).Draw(t, "scramble") == 0 {
				p[e] = Slot{fmt.Sprintf("s%d", rapid.IntRange(0, 7).Draw(t, "sup")), rapid.IntRange(6700, 6705).Draw(t, "port")}
			}
		}
		cur[id] = p
	}
	return Input{Topologies: topos, Supervisors: sups, Current: cur}
}

func slicesClone(s []Supervisor) []Supervisor { return append([]Supervisor(nil), s...) }

func liveSlots(in Input) map[Slot]bool {
	live := map[Slot]bool{}
	for _, s := range in.Supervisors {
		for _, p := range s.Ports {
			live[Slot{s.ID, p}] = true
		}
	}
	return live
}

// checkInvariants holds for every output.
func checkInvariants(t *rapid.T, in Input, out Assignment) {
	live := liveSlots(in)
	owner := map[Slot]string{}
	for _, topo := range in.Topologies {
		p := out[topo.ID]
		want := min(topo.Workers, len(topo.Executors))
		if len(p) != 0 && len(p) != len(topo.Executors) {
			t.Fatalf("%s: %d of %d executors assigned", topo.ID, len(p), len(topo.Executors))
		}
		load := map[Slot]int{}
		for _, e := range topo.Executors {
			s, ok := p[e]
			if !ok {
				if len(p) > 0 {
					t.Fatalf("%s: executor %v unassigned", topo.ID, e)
				}
				continue
			}
			if !live[s] {
				t.Fatalf("%s: executor %v on slot %v, not a live slot", topo.ID, e, s)
			}
			if o, ok := owner[s]; ok && o != topo.ID {
				t.Fatalf("slot %v runs workers of both %s and %s", s, o, topo.ID)
			}
			owner[s] = topo.ID
			load[s]++
		}
		if len(load) > want {
			t.Fatalf("%s: %d workers, want at most %d", topo.ID, len(load), want)
		}
		lo, hi := len(topo.Executors), 0
		for _, n := range load {
			lo, hi = min(lo, n), max(hi, n)
		}
		if len(load) > 0 && hi-lo > 1 {
			t.Fatalf("%s: executors per worker range %d..%d, want a spread within 1: %v", topo.ID, lo, hi, load)
		}
	}
	if len(out) > len(in.Topologies) {
		t.Fatalf("assignment has %d topologies, input %d", len(out), len(in.Topologies))
	}
	// A topology gets fewer workers than it wants only when no slot was free.
	used := len(owner)
	for _, topo := range in.Topologies {
		want := min(topo.Workers, len(topo.Executors))
		if got := workers(out[topo.ID]); got < want && used < len(live) {
			t.Fatalf("%s: %d workers of %d wanted while %d of %d slots are unused", topo.ID, got, want, len(live)-used, len(live))
		}
	}
}

func workers(p Placement) int {
	s := map[Slot]bool{}
	for _, v := range p {
		s[v] = true
	}
	return len(s)
}

func TestScheduleInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		out := Schedule(in)
		checkInvariants(t, in, out)
	})
}

func equal(a, b Assignment) bool {
	return maps.EqualFunc(a, b, func(x, y Placement) bool { return maps.Equal(x, y) })
}

func TestScheduleIsDeterministicAndIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		out := Schedule(in)
		if again := Schedule(in); !equal(out, again) {
			t.Fatalf("two runs on one input differ:\n%v\n%v", out, again)
		}
		// Shuffled input order must not matter.
		shuffled := in
		shuffled.Topologies = rapid.Permutation(in.Topologies).Draw(t, "topoOrder")
		shuffled.Supervisors = rapid.Permutation(in.Supervisors).Draw(t, "supOrder")
		if again := Schedule(shuffled); !equal(out, again) {
			t.Fatalf("input order changed the result:\n%v\n%v", out, again)
		}
		next := in
		next.Current = out
		if again := Schedule(next); !equal(out, again) {
			t.Fatalf("not idempotent: moved %d executors on a stable input:\n%v\n%v", Moved(out, again), out, again)
		}
	})
}

// When supervisors only die, the executors on the survivors stay put.
func TestScheduleMovesOnlyTheWorkOfDeadSupervisors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		in.Current = nil
		before := Schedule(in)
		var alive []Supervisor
		dead := map[string]bool{}
		for _, s := range in.Supervisors {
			if rapid.IntRange(0, 3).Draw(t, "dies") == 0 {
				dead[s.ID] = true
			} else {
				alive = append(alive, s)
			}
		}
		after := Schedule(Input{Topologies: in.Topologies, Supervisors: alive, Current: before})
		checkInvariants(t, Input{Topologies: in.Topologies, Supervisors: alive}, after)
		for id, p := range before {
			if len(after[id]) == 0 {
				continue // no slot left for it at all
			}
			for e, s := range p {
				if !dead[s.Supervisor] && after[id][e] != s {
					t.Fatalf("%s: executor %v moved from live %v to %v", id, e, s, after[id][e])
				}
			}
		}
	})
}

func TestScheduleSpreadsWorkersOverSupervisors(t *testing.T) {
	sups := []Supervisor{{ID: "a", Ports: []int{1, 2, 3}}, {ID: "b", Ports: []int{1, 2, 3}}, {ID: "c", Ports: []int{1, 2, 3}}}
	var execs []Executor
	for i := range 12 {
		execs = append(execs, Executor{"bolt", i, i})
	}
	out := Schedule(Input{Topologies: []Topology{{ID: "t", Executors: execs, Workers: 6}}, Supervisors: sups})
	per := map[string]map[Slot]bool{}
	for _, s := range out["t"] {
		if per[s.Supervisor] == nil {
			per[s.Supervisor] = map[Slot]bool{}
		}
		per[s.Supervisor][s] = true
	}
	for _, id := range []string{"a", "b", "c"} {
		if len(per[id]) != 2 {
			t.Fatalf("supervisor %s runs %d workers, want 2 each: %v", id, len(per[id]), out)
		}
	}
}

func TestScheduleRebalance(t *testing.T) {
	sups := []Supervisor{{ID: "a", Ports: []int{1, 2}}, {ID: "b", Ports: []int{1, 2}}}
	var execs []Executor
	for i := range 8 {
		execs = append(execs, Executor{"bolt", i, i})
	}
	topo := Topology{ID: "t", Executors: execs, Workers: 2}
	two := Schedule(Input{Topologies: []Topology{topo}, Supervisors: sups})
	if workers(two["t"]) != 2 {
		t.Fatalf("want 2 workers: %v", two)
	}
	topo.Workers = 4
	four := Schedule(Input{Topologies: []Topology{topo}, Supervisors: sups, Current: two})
	if workers(four["t"]) != 4 || Moved(two, four) != 4 {
		t.Fatalf("2→4 workers: %d workers, %d moved, want 4 and 4 (each old worker hands over half)", workers(four["t"]), Moved(two, four))
	}
	topo.Workers = 1
	one := Schedule(Input{Topologies: []Topology{topo}, Supervisors: sups, Current: four})
	if workers(one["t"]) != 1 || Moved(four, one) != 6 {
		t.Fatalf("4→1 workers: %d workers, %d moved, want 1 and 6", workers(one["t"]), Moved(four, one))
	}
	// No slots at all: nothing assigned; an earlier holder of a slot keeps it.
	if out := Schedule(Input{Topologies: []Topology{topo}, Current: one}); len(out) != 0 {
		t.Fatalf("without supervisors: %v", out)
	}
	other := Topology{ID: "a-first", Executors: execs[:2], Workers: 4}
	both := Schedule(Input{Topologies: []Topology{topo, other}, Supervisors: []Supervisor{{ID: "a", Ports: []int{1}}}, Current: one})
	if len(both["a-first"]) != 0 && workers(one["t"]) == 1 && Moved(one, both) != 0 {
		t.Fatalf("a topology took a held slot: %v", both)
	}
}
