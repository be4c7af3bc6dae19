package topology

import "slices"

// plan is the physical layout of a topology under a config: which executor
// runs which tasks and where every stream goes. It is computed once per
// submission and shared by every worker incarnation.
type plan struct {
	topo       *Topology
	cfg        Config
	execs      []execPlan
	taskExec   []int // task id -> executor index
	ackerTasks []TaskID
	routes     map[*component]map[string]*routePlan

	// Set by assign for a worker that runs a share of the topology
	// (RunWorker); nil when one worker runs every task.
	cluster *assignment
}

type execKind uint8

const (
	spoutExec execKind = iota
	boltExec
	ackerExec
)

type execPlan struct {
	kind  execKind
	comp  *component // nil for ackers
	tasks []TaskID
}

func (e *execPlan) name() string {
	if e.comp == nil {
		return ackerComponent
	}
	return e.comp.id
}

// ackerComponent is the component id that acker tasks report under.
const ackerComponent = "__acker"

// routePlan says where one stream of one component goes.
type routePlan struct {
	schema *schema
	subs   []subscriptionPlan
	// directTargets marks, by task id, the tasks subscribed with the
	// direct grouping (nil for a stream that is not direct).
	directTargets []bool
}

type subscriptionPlan struct {
	grouping   Grouping
	targets    []TaskID
	fieldIndex []int
}

func newPlan(t *Topology, cfg Config) *plan {
	p := &plan{topo: t, cfg: cfg, routes: make(map[*component]map[string]*routePlan)}
	p.taskExec = make([]int, t.numTasks+cfg.Ackers)
	for _, c := range t.components {
		kind := boltExec
		if c.spout {
			kind = spoutExec
		}
		for _, tasks := range c.executorTasks() {
			p.addExec(execPlan{kind: kind, comp: c, tasks: tasks})
		}
	}
	for i := range cfg.Ackers {
		task := TaskID(t.numTasks + i)
		p.ackerTasks = append(p.ackerTasks, task)
		p.addExec(execPlan{kind: ackerExec, tasks: []TaskID{task}})
	}
	for _, c := range t.components {
		p.routes[c] = make(map[string]*routePlan)
		for name, s := range c.outputs {
			p.routes[c][name] = p.route(c, name, s)
		}
	}
	return p
}

func (p *plan) addExec(e execPlan) {
	for _, task := range e.tasks {
		p.taskExec[task] = len(p.execs)
	}
	p.execs = append(p.execs, e)
}

// route collects the subscriptions to stream of c, in component order.
func (p *plan) route(c *component, stream string, s *schema) *routePlan {
	r := &routePlan{schema: s}
	if s.direct {
		r.directTargets = make([]bool, p.topo.numTasks)
	}
	for _, sub := range p.topo.components {
		for _, in := range sub.inputs {
			if in.from != c.id || in.stream != stream {
				continue
			}
			if in.grouping.kind == groupDirect {
				for _, task := range sub.taskIDs {
					r.directTargets[task] = true
				}
				continue
			}
			sp := subscriptionPlan{grouping: in.grouping, targets: slices.Clone(sub.taskIDs)}
			for _, f := range in.grouping.fields {
				sp.fieldIndex = append(sp.fieldIndex, s.fields.Index(f))
			}
			r.subs = append(r.subs, sp)
		}
	}
	return r
}

// local reports whether executor exec runs in this worker.
func (p *plan) local(exec int) bool {
	return p.cluster == nil || p.cluster.execPeer[exec] < 0
}

// ackerFor returns the acker task that tracks root.
func (p *plan) ackerFor(root RootID) TaskID {
	return p.ackerTasks[uint64(root)%uint64(len(p.ackerTasks))]
}
