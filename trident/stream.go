package trident

import (
	"fmt"
	"slices"

	"github.com/squallstream/squall/transport"

	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/internal/plan"
)

// Topology declares Trident streams. Mistakes (unknown fields, clashing
// names) are collected as they are made and reported together by Submit.
type Topology struct {
	name    string
	nodes   []*node
	sources []*node
	types   []func(*transport.Types) error // ValueType's registrations
	drpc    []*drpcDecl                    // NewDRPCStream's functions
	errs    []error
}

// NewTopology returns an empty topology. name is the coordinator's state
// id in the coordination store: keep it stable across deployments so that a
// restarted topology resumes from its last committed batch.
func NewTopology(name string) *Topology { return &Topology{name: name} }

// node is one operation of the declared graph: a vertex with its
// parents, output fields and parallelism hint, and the operation itself
// (op). Its place in the plan is not stored on it: the planner
// (trident/internal/plan) reads a description of the nodes (graph.go) and
// returns a plan.
type node struct {
	id     int
	op     exec.Op
	src    *Source // a source node's source
	parent *node
	others []*node   // further parents of a merge or join
	sch    *schema   // output fields
	hint   int       // parallelism hint, 0 if none
	label  string    // the section's name (Name), "" if none
	load   Resources // per task (CPULoad, MemoryLoad), zero if none
}

// inputs returns the node's parents.
func (n *node) inputs() []*node {
	if n.parent == nil {
		return nil
	}
	return append([]*node{n.parent}, n.others...)
}

func (t *Topology) add(n *node) *node {
	n.id = len(t.nodes)
	t.nodes = append(t.nodes, n)
	return n
}

func (t *Topology) errorf(format string, args ...any) {
	t.errs = append(t.errs, fmt.Errorf("trident: "+format, args...))
}

// Stream is a stream of tuples in a Topology.
type Stream struct {
	t *Topology
	n *node
}

// NewStream adds a stream read from src. id is the stream's state id in the
// coordination store (keep it stable across deployments); it must be unique
// in the topology.
func (t *Topology) NewStream(id string, src Source) *Stream {
	for _, s := range t.sources {
		if s.src.id == id {
			t.errorf("stream id %q used twice", id)
		}
	}
	if src.fields == nil {
		t.errorf("stream %q: source declares no fields", id)
	}
	spec := src
	spec.id = id
	n := t.add(&node{op: &exec.Source{}, src: &spec, sch: newSchema(src.fields)})
	t.sources = append(t.sources, n)
	return &Stream{t: t, n: n}
}

// Fields returns the stream's fields.
func (s *Stream) Fields() Fields { return slices.Clone(s.n.sch.fields) }

// checkFields records an error for every name s does not have.
func (s *Stream) checkFields(op string, names Fields) bool {
	ok := true
	for _, f := range names {
		if _, has := s.n.sch.index[f]; !has {
			s.t.errorf("%s: unknown field %q (stream fields: %v)", op, f, s.n.sch.fields)
			ok = false
		}
	}
	return ok
}

// Each runs fn on every tuple, giving it the input fields; each tuple fn
// emits is the input tuple followed by the values of outputs.
func (s *Stream) Each(input Fields, fn Function, outputs ...string) *Stream {
	s.checkFields("Each", input)
	out := append(slices.Clone(s.n.sch.fields), outputs...)
	for i, f := range outputs {
		if slices.Index(s.n.sch.fields, f) >= 0 || slices.Index(outputs, f) != i {
			s.t.errorf("Each: output field %q clashes with an existing field (stream fields: %v)", f, s.n.sch.fields)
		}
	}
	if fn == nil {
		s.t.errorf("Each: nil function")
	}
	n := &node{op: &exec.Each{Fn: eachFunc{fn: fn, idx: s.n.sch.indexes(input), sch: newSchema(input)}, In: input}, parent: s.n, sch: newSchema(out)}
	return &Stream{t: s.t, n: s.t.add(n)}
}

// Filter keeps the tuples f keeps.
func (s *Stream) Filter(f Filter) *Stream {
	if f == nil {
		s.t.errorf("Filter: nil filter")
	}
	return &Stream{t: s.t, n: s.t.add(&node{op: &exec.Filter{Fn: filterFunc{f: f, sch: s.n.sch}}, parent: s.n, sch: s.n.sch})}
}

// Map replaces each tuple with the values fn returns, named outputs.
func (s *Stream) Map(fn MapFunction, outputs ...string) *Stream {
	if fn == nil {
		s.t.errorf("Map: nil function")
	}
	s.checkOutputs("Map", outputs)
	n := &node{op: &exec.Map{Fn: mapFunc{fn: fn, sch: s.n.sch}}, parent: s.n, sch: newSchema(slices.Clone(outputs))}
	return &Stream{t: s.t, n: s.t.add(n)}
}

// FlatMap replaces each tuple with the tuples fn emits, named outputs.
func (s *Stream) FlatMap(fn FlatMapFunction, outputs ...string) *Stream {
	if fn == nil {
		s.t.errorf("FlatMap: nil function")
	}
	s.checkOutputs("FlatMap", outputs)
	n := &node{op: &exec.FlatMap{Fn: flatMapFunc{fn: fn, sch: s.n.sch}}, parent: s.n, sch: newSchema(slices.Clone(outputs))}
	return &Stream{t: s.t, n: s.t.add(n)}
}

// Peek calls fn on every tuple and passes it on unchanged; fn must not
// keep the tuple.
func (s *Stream) Peek(fn func(Tuple)) *Stream {
	if fn == nil {
		s.t.errorf("Peek: nil function")
	}
	return &Stream{t: s.t, n: s.t.add(&node{op: &exec.Peek{Fn: peekFunc(fn, s.n.sch)}, parent: s.n, sch: s.n.sch})}
}

// checkOutputs records an error for an empty or repeated output field.
func (s *Stream) checkOutputs(op string, outputs []string) {
	if len(outputs) == 0 {
		s.t.errorf("%s: no output fields", op)
	}
	for i, f := range outputs {
		if f == "" || slices.Index(outputs, f) != i {
			s.t.errorf("%s: output field %q is empty or repeated", op, f)
		}
	}
}

// Project keeps only the named fields, in that order.
func (s *Stream) Project(fields ...string) *Stream {
	s.checkFields("Project", fields)
	n := &node{op: &exec.Project{Idx: s.n.sch.indexes(fields)}, parent: s.n, sch: newSchema(slices.Clone(fields))}
	return &Stream{t: s.t, n: s.t.add(n)}
}

func (s *Stream) partition(p plan.Partitioning, fields Fields) *Stream {
	n := &node{op: &exec.Partition{How: p, Fields: slices.Clone(fields)}, parent: s.n, sch: s.n.sch}
	return &Stream{t: s.t, n: s.t.add(n)}
}

// Shuffle spreads the tuples evenly over the next operation's tasks.
func (s *Stream) Shuffle() *Stream { return s.partition(plan.Shuffle, nil) }

// LocalOrShuffle spreads the tuples over the next operation's tasks in the
// sending task's own worker process, or over all of them when none runs
// there (Storm's localOrShuffle): in one process it is Shuffle; across
// workers it keeps tuples off the network where it can.
func (s *Stream) LocalOrShuffle() *Stream { return s.partition(plan.LocalOrShuffle, nil) }

// PartitionBy sends tuples with equal values in fields to the same task.
func (s *Stream) PartitionBy(fields ...string) *Stream {
	s.checkFields("PartitionBy", fields)
	return s.partition(plan.ByFields, fields)
}

// Global sends every tuple to one task.
func (s *Stream) Global() *Stream { return s.partition(plan.Global, nil) }

// Broadcast sends every tuple to every task of the next operation.
func (s *Stream) Broadcast() *Stream { return s.partition(plan.Broadcast, nil) }

// BatchGlobal sends all the tuples of a batch to one task, chosen by the
// batch's txid, so different batches go to different tasks.
func (s *Stream) BatchGlobal() *Stream { return s.partition(plan.BatchGlobal, nil) }

// Name names the section of the stream this operation belongs to
// (Storm's name): the bolt that runs it gets the name as a suffix of its
// component id ("b-2-counts"), which the plan printout, the UI graph and
// the metrics show, and which stays the same from one submit to the next.
// Names are 1 to 64 letters, digits, '_' or '.'; a source's section is
// already named by its stream id.
func (s *Stream) Name(name string) *Stream {
	if !validSectionName(name) {
		s.t.errorf("Name(%q): a name is 1 to 64 letters, digits, '_' or '.'", name)
		return s
	}
	s.n.label = name
	return s
}

func validSectionName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Parallelism asks for n tasks for the operations between the nearest
// repartitions around this point of the stream.
func (s *Stream) Parallelism(n int) *Stream {
	if n < 1 {
		s.t.errorf("Parallelism: %d is below 1", n)
	}
	s.n.hint = n
	return s
}

// Merge returns the union of streams, which must belong to t and have the
// same fields. Its tuples are spread evenly over the next operation's
// tasks.
func (t *Topology) Merge(streams ...*Stream) *Stream {
	if len(streams) < 2 {
		t.errorf("Merge: needs at least two streams, got %d", len(streams))
		if len(streams) == 1 {
			return streams[0]
		}
	}
	n := &node{op: &exec.Merge{}}
	for i, s := range streams {
		if s.t != t {
			t.errorf("Merge: stream %d belongs to another topology", i)
			continue
		}
		if i == 0 {
			n.parent, n.sch = s.n, s.n.sch
			continue
		}
		if !slices.Equal(s.n.sch.fields, n.sch.fields) {
			t.errorf("Merge: stream %d has fields %v, stream 0 has %v", i, s.n.sch.fields, n.sch.fields)
		}
		n.others = append(n.others, s.n)
	}
	if n.parent == nil {
		n.sch = newSchema(nil) // every stream was refused above
	}
	return &Stream{t: t, n: t.add(n)}
}

// GroupedStream is a stream partitioned by group fields, ready to be
// aggregated per group.
type GroupedStream struct {
	s      *Stream
	fields Fields
}

// GroupBy partitions the stream by fields for a grouped aggregation.
func (s *Stream) GroupBy(fields ...string) *GroupedStream {
	if len(fields) == 0 {
		s.t.errorf("GroupBy: no fields")
	}
	return &GroupedStream{s: s.PartitionBy(fields...), fields: slices.Clone(fields)}
}

// Name names the section of the aggregation that follows (Stream.Name).
func (g *GroupedStream) Name(name string) *GroupedStream {
	g.s.Name(name)
	return g
}

// Parallelism asks for n tasks for the aggregation that follows.
func (g *GroupedStream) Parallelism(n int) *GroupedStream {
	g.s.Parallelism(n)
	return g
}
