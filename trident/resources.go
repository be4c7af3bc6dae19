package trident

import (
	"fmt"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// Resources is what a part of a topology needs of a machine, as Storm's
// resource-aware scheduler counts it: CPU in percent of one core (100 is
// a whole core) and memory in MB (Storm's on-heap and off-heap memory
// together). The zero Resources asks for nothing.
type Resources struct {
	CPU      int
	MemoryMB int
}

// Add returns the sum of r and o.
func (r Resources) Add(o Resources) Resources {
	return Resources{CPU: r.CPU + o.CPU, MemoryMB: r.MemoryMB + o.MemoryMB}
}

func (r Resources) String() string { return fmt.Sprintf("%d%% CPU, %d MB", r.CPU, r.MemoryMB) }

// CPULoad declares the CPU the operation just declared needs per task, in
// percent of one core (Storm's setCPULoad). As in Storm, the loads of the
// operations that run in one component (the operations between two
// repartitions) are summed, and every task of the component needs the
// sum. A repartition (GroupBy, Shuffle...) takes no load: declare it on
// an operation.
func (s *Stream) CPULoad(percent int) *Stream {
	if s.loadable("CPULoad", percent) {
		s.n.load.CPU = percent
	}
	return s
}

// MemoryLoad declares the memory, in MB, the operation just declared
// needs per task (Storm's setMemoryLoad, on-heap and off-heap together);
// summed like CPULoad.
func (s *Stream) MemoryLoad(mb int) *Stream {
	if s.loadable("MemoryLoad", mb) {
		s.n.load.MemoryMB = mb
	}
	return s
}

func (s *Stream) loadable(method string, v int) bool {
	if v < 0 {
		s.t.errorf("%s: %d is negative", method, v)
		return false
	}
	switch s.n.op.(type) {
	case *exec.Partition:
		s.t.errorf("%s: a repartition takes no load (as in Storm): declare it on an operation", method)
		return false
	}
	return true
}

// CPULoad declares the CPU, in percent of one core, that writing the
// state needs per task (Storm's TridentState.setCPULoad); it adds to the
// loads of the other operations of the writing component.
func (s *State[S]) CPULoad(percent int) *State[S] {
	if s.n == nil {
		s.t.errorf("CPULoad: static state runs no operation of its own")
		return s
	}
	(&Stream{t: s.t, n: s.n}).CPULoad(percent)
	return s
}

// MemoryLoad declares the memory, in MB, that writing the state needs
// per task (Storm's TridentState.setMemoryLoad).
func (s *State[S]) MemoryLoad(mb int) *State[S] {
	if s.n == nil {
		s.t.errorf("MemoryLoad: static state runs no operation of its own")
		return s
	}
	(&Stream{t: s.t, n: s.n}).MemoryLoad(mb)
	return s
}

// Demand is what a topology run across worker processes needs: the
// master coordinator's executor, which runs in MasterShare, and every
// other executor of the generated topology in the order they are dealt
// to the shares (see Share): executor i runs in share (i+1) mod count.
// An executor needs the load of its component's stage per task it runs;
// the master coordinator and the ackers declare none.
type Demand struct {
	Master    Resources
	Executors []Resources
}

// Shares returns what each of count shares needs.
func (d Demand) Shares(count int) []Resources {
	if count < 1 {
		return nil
	}
	out := make([]Resources, count)
	out[MasterShare] = out[MasterShare].Add(d.Master)
	for i, r := range d.Executors {
		s := dealtShare(i, count)
		out[s] = out[s].Add(r)
	}
	return out
}

// Demand returns what the topology, run with cfg, needs: the loads its
// streams declare (CPULoad, MemoryLoad), per executor of the generated
// topology. A topology that declares no load needs nothing.
func (t *Topology) Demand(cfg Config) (Demand, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Demand{}, err
	}
	if err := t.check(); err != nil {
		return Demand{}, err
	}
	if cfg.Store == nil {
		cfg.Store = coordstore.NewMemory() // not used: nothing runs
	}
	topo, r, err := t.generate(&cfg, coordstore.Fence{Owner: t.name})
	if err != nil {
		return Demand{}, err
	}
	return demandOf(r.plan, topo, cfg.Topology.Ackers), nil
}

// demandOf computes the demand of the generated topology topo of p.
func demandOf(p *plan.Plan, topo *topology.Topology, ackers int) Demand {
	loads := map[string]plan.Load{}
	for _, s := range p.Stages {
		loads[s.Name] = s.Load
	}
	var d Demand
	for _, e := range executors(topo, ackers) {
		l := loads[e.component]
		r := Resources{CPU: l.CPU * len(e.tasks), MemoryMB: l.MemoryMB * len(e.tasks)}
		if e.component == runtime.MasterComponent {
			d.Master = d.Master.Add(r)
			continue
		}
		d.Executors = append(d.Executors, r)
	}
	return d
}
