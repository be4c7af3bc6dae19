package schedule

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func shares(id string, workers int, need Resources) Topology {
	t := Topology{ID: id, Workers: workers, Worker: need}
	for i := range workers {
		t.Executors = append(t.Executors, Executor{"share", i, i})
	}
	return t
}

func sup(id string, ports int, cpu, mem int) Supervisor {
	s := Supervisor{ID: id, Capacity: Resources{CPU: cpu, MemoryMB: mem}}
	for p := range ports {
		s.Ports = append(s.Ports, 6700+p)
	}
	return s
}

// perSupervisor counts the workers of placement p on each supervisor.
func perSupervisor(p Placement) map[string]int {
	slots := map[Slot]bool{}
	for _, s := range p {
		slots[s] = true
	}
	out := map[string]int{}
	for s := range slots {
		out[s.Supervisor]++
	}
	return out
}

// TestScheduleWithinCapacity: the table of placements under declared
// capacities, and the refusals with what is missing.
func TestScheduleWithinCapacity(t *testing.T) {
	// Storm's Trident RAS example on two workers (trident's
	// TestLoadsLikeStorm): its shares need 400% CPU and 11520 MB, and
	// 500% CPU and 13568 MB; each worker is counted at the larger.
	storm := Resources{CPU: 500, MemoryMB: 13568}
	for _, c := range []struct {
		name   string
		sups   []Supervisor
		topos  []Topology
		want   map[string]map[string]int // topology → supervisor → workers
		refuse map[string]string         // topology → part of the message
	}{
		{
			name:  "fits on one supervisor",
			sups:  []Supervisor{sup("a", 4, 400, 4096)},
			topos: []Topology{shares("t", 2, Resources{100, 1024})},
			want:  map[string]map[string]int{"t": {"a": 2}},
		},
		{
			name:  "spreads by capacity",
			sups:  []Supervisor{sup("a", 4, 100, 0), sup("b", 4, 400, 0)},
			topos: []Topology{shares("t", 4, Resources{CPU: 100})},
			want:  map[string]map[string]int{"t": {"a": 1, "b": 3}},
		},
		{
			name:   "does not fit: CPU missing",
			sups:   []Supervisor{sup("a", 4, 100, 1024), sup("b", 4, 200, 1024)},
			topos:  []Topology{shares("t", 2, Resources{150, 512})},
			refuse: map[string]string{"t": `topology "t" does not fit: it needs 2 worker(s) of 150% CPU and 512 MB each; worker 2 of them fits nowhere: the most any supervisor has free is 100% CPU and 1024 MB (missing 50% CPU)`},
		},
		{
			name:   "does not fit: memory missing",
			sups:   []Supervisor{sup("a", 4, 0, 1024)},
			topos:  []Topology{shares("t", 1, Resources{10, 2048})},
			refuse: map[string]string{"t": "worker 1 of them fits nowhere: the most any supervisor has free is 10% CPU and 1024 MB (missing 1024 MB of memory)"},
		},
		{
			name:   "too few slots for a topology with resources",
			sups:   []Supervisor{sup("a", 2, 800, 0)},
			topos:  []Topology{shares("t", 3, Resources{CPU: 10})},
			refuse: map[string]string{"t": "worker 3 of them found no free slot"},
		},
		{
			name:  "without resources: as before, on fewer slots",
			sups:  []Supervisor{sup("a", 2, 1, 1)},
			topos: []Topology{shares("t", 3, Resources{})},
			want:  map[string]map[string]int{"t": {"a": 2}},
		},
		{
			name:  "undeclared capacity has no limit",
			sups:  []Supervisor{sup("a", 2, 0, 0)},
			topos: []Topology{shares("t", 2, Resources{100000, 100000})},
			want:  map[string]map[string]int{"t": {"a": 2}},
		},
		{
			name:   "a refused topology leaves its slots to the next",
			sups:   []Supervisor{sup("a", 2, 200, 0)},
			topos:  []Topology{shares("a-big", 2, Resources{CPU: 150}), shares("b-small", 2, Resources{CPU: 100})},
			want:   map[string]map[string]int{"b-small": {"a": 2}},
			refuse: map[string]string{"a-big": "missing 100% CPU"},
		},
		{
			name:  "Storm's example: one worker per 8-core 16 GB machine",
			sups:  []Supervisor{sup("m1", 4, 800, 16384), sup("m2", 4, 800, 16384)},
			topos: []Topology{shares("ras", 2, storm)},
			want:  map[string]map[string]int{"ras": {"m1": 1, "m2": 1}},
		},
		{
			name:   "Storm's example on one machine",
			sups:   []Supervisor{sup("m1", 4, 800, 16384)},
			topos:  []Topology{shares("ras", 2, storm)},
			refuse: map[string]string{"ras": "(missing 200% CPU and 10752 MB of memory)"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := Decide(Input{Topologies: c.topos, Supervisors: c.sups})
			for _, topo := range c.topos {
				got := perSupervisor(res.Assignment[topo.ID])
				if w := c.want[topo.ID]; !maps.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
					t.Errorf("%s: workers per supervisor %v, want %v", topo.ID, got, w)
				}
				err, refused := res.Refused[topo.ID]
				msg, wantRefused := c.refuse[topo.ID]
				switch {
				case refused != wantRefused:
					t.Errorf("%s: refused %v (%v), want %v", topo.ID, refused, err, wantRefused)
				case refused:
					if !strings.Contains(err.Error(), msg) || !errors.Is(err, ErrUnfit) {
						t.Errorf("%s: refusal %q, want it to contain %q", topo.ID, err, msg)
					}
					if len(res.Assignment[topo.ID]) != 0 {
						t.Errorf("%s: refused but placed: %v", topo.ID, res.Assignment[topo.ID])
					}
				}
			}
		})
	}
}

// TestKeptWorkersMustStillFit: a worker whose supervisor's capacity
// shrank below what it holds moves to a supervisor where it fits.
func TestKeptWorkersMustStillFit(t *testing.T) {
	topo := shares("t", 2, Resources{CPU: 100})
	before := Schedule(Input{Topologies: []Topology{topo}, Supervisors: []Supervisor{sup("a", 2, 200, 0), sup("b", 2, 200, 0)}})
	if got := perSupervisor(before["t"]); !maps.Equal(got, map[string]int{"a": 1, "b": 1}) {
		t.Fatalf("before: %v", got)
	}
	after := Schedule(Input{Topologies: []Topology{topo}, Supervisors: []Supervisor{sup("a", 2, 50, 0), sup("b", 2, 200, 0)}, Current: before})
	if got := perSupervisor(after["t"]); !maps.Equal(got, map[string]int{"b": 2}) {
		t.Fatalf("after a's capacity shrank: %v, want both on b", got)
	}
}

// genCapacities adds declared capacities and worker needs to an input.
func genCapacities(t *rapid.T, in Input) Input {
	for i := range in.Supervisors {
		in.Supervisors[i].Capacity = Resources{
			CPU:      rapid.SampledFrom([]int{0, 50, 100, 200, 400}).Draw(t, fmt.Sprintf("cpu%d", i)),
			MemoryMB: rapid.SampledFrom([]int{0, 512, 1024, 4096}).Draw(t, fmt.Sprintf("mem%d", i)),
		}
	}
	for i := range in.Topologies {
		in.Topologies[i].Worker = Resources{
			CPU:      rapid.SampledFrom([]int{0, 0, 25, 50, 100, 150}).Draw(t, fmt.Sprintf("need-cpu%d", i)),
			MemoryMB: rapid.SampledFrom([]int{0, 0, 256, 512, 2048}).Draw(t, fmt.Sprintf("need-mem%d", i)),
		}
	}
	return in
}

// checkCapacity: no supervisor's declared capacity is exceeded, a
// topology with resources runs in all its workers or is refused, and a
// refused topology runs nowhere.
func checkCapacity(t *rapid.T, in Input, res Result) {
	used := map[string]Resources{}
	for _, topo := range in.Topologies {
		p := res.Assignment[topo.ID]
		slots := map[Slot]bool{}
		for _, s := range p {
			slots[s] = true
		}
		for s := range slots {
			used[s.Supervisor] = used[s.Supervisor].Add(topo.Worker)
		}
		want := min(max(topo.Workers, 0), len(topo.Executors))
		_, refused := res.Refused[topo.ID]
		switch {
		case refused && len(p) > 0:
			t.Fatalf("%s: refused (%v) yet placed", topo.ID, res.Refused[topo.ID])
		case !topo.Worker.IsZero() && !refused && len(slots) != want:
			t.Fatalf("%s: needs resources, runs in %d workers of %d, not refused", topo.ID, len(slots), want)
		case topo.Worker.IsZero() && refused:
			t.Fatalf("%s: needs nothing, refused: %v", topo.ID, res.Refused[topo.ID])
		}
	}
	for _, s := range in.Supervisors {
		c, u := s.Capacity, used[s.ID]
		if (c.CPU > 0 && u.CPU > c.CPU) || (c.MemoryMB > 0 && u.MemoryMB > c.MemoryMB) {
			t.Fatalf("supervisor %s: its workers need %v, its capacity is %v", s.ID, u, c)
		}
	}
}

func TestScheduleNeverOverCapacity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genCapacities(t, genInput(t))
		res := Decide(in)
		checkCapacity(t, in, res)
		// Deterministic, independent of input order, idempotent.
		shuffled := in
		shuffled.Topologies = rapid.Permutation(in.Topologies).Draw(t, "topoOrder")
		shuffled.Supervisors = rapid.Permutation(in.Supervisors).Draw(t, "supOrder")
		if again := Decide(shuffled); !equal(res.Assignment, again.Assignment) ||
			!slices.Equal(slices.Sorted(maps.Keys(res.Refused)), slices.Sorted(maps.Keys(again.Refused))) {
			t.Fatalf("input order changed the result:\n%v\n%v", res, again)
		}
		next := in
		next.Current = res.Assignment
		again := Decide(next)
		checkCapacity(t, next, again)
		if !equal(res.Assignment, again.Assignment) {
			t.Fatalf("not idempotent: moved %d executors:\n%v\n%v", Moved(res.Assignment, again.Assignment), res.Assignment, again.Assignment)
		}
	})
}
