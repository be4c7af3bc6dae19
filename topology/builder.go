package topology

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/squallstream/squall/transport"
)

// Builder declares a topology. Declarations are checked when Build is
// called, which reports every problem at once.
type Builder struct {
	decls []*Declarer
	types *transport.Types
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{} }

// Declarer declares one component: its parallelism, its output streams and,
// for a bolt, its inputs. Its methods return the Declarer for chaining.
type Declarer struct {
	id          string
	spout       bool
	newSpout    func() Spout
	newBolt     func() Bolt
	parallelism int
	tasks       int
	streams     []streamDecl
	inputs      []input
}

type streamDecl struct {
	name   string
	fields Fields
	direct bool
}

type input struct {
	from     string
	stream   string
	grouping Grouping
}

// ValueTypes declares the types of tuple values, beyond the transport's
// built-in set (basic types, []any, map[string]any, time.Time), that the
// topology's components emit: in cluster mode (RunWorker) they cross
// workers as registered in ts. A topology that runs in one process needs
// none. ts must not change after Build.
func (b *Builder) ValueTypes(ts *transport.Types) { b.types = ts }

// Spout declares a spout; newSpout is called once per task.
func (b *Builder) Spout(id string, newSpout func() Spout) *Declarer {
	d := &Declarer{id: id, spout: true, newSpout: newSpout, parallelism: 1}
	b.decls = append(b.decls, d)
	return d
}

// Bolt declares a bolt; newBolt is called once per task.
func (b *Builder) Bolt(id string, newBolt func() Bolt) *Declarer {
	d := &Declarer{id: id, newBolt: newBolt, parallelism: 1}
	b.decls = append(b.decls, d)
	return d
}

// BasicBolt declares a bolt whose inputs are acked for it (see BasicBolt);
// newBolt is called once per task.
func (b *Builder) BasicBolt(id string, newBolt func() BasicBolt) *Declarer {
	var f func() Bolt
	if newBolt != nil {
		f = func() Bolt { return &basicBoltAdapter{bolt: newBolt()} }
	}
	return b.Bolt(id, f)
}

// Parallelism sets the number of executors (goroutines). The default is 1.
func (d *Declarer) Parallelism(executors int) *Declarer { d.parallelism = executors; return d }

// Tasks sets the number of tasks, spread evenly over the executors. The
// default is one task per executor.
func (d *Declarer) Tasks(tasks int) *Declarer { d.tasks = tasks; return d }

// Output declares the fields of the default stream.
func (d *Declarer) Output(fields ...string) *Declarer {
	return d.OutputStream(DefaultStream, fields...)
}

// OutputStream declares a stream and its fields.
func (d *Declarer) OutputStream(stream string, fields ...string) *Declarer {
	d.streams = append(d.streams, streamDecl{name: stream, fields: append(Fields(nil), fields...)})
	return d
}

// DirectStream declares a stream whose tuples are sent with EmitDirect to
// tasks that subscribe with the Direct grouping.
func (d *Declarer) DirectStream(stream string, fields ...string) *Declarer {
	d.streams = append(d.streams, streamDecl{name: stream, fields: append(Fields(nil), fields...), direct: true})
	return d
}

// Input subscribes the bolt to the default stream of component from.
func (d *Declarer) Input(from string, g Grouping) *Declarer {
	return d.InputStream(from, DefaultStream, g)
}

// InputStream subscribes the bolt to a stream of component from.
func (d *Declarer) InputStream(from, stream string, g Grouping) *Declarer {
	d.inputs = append(d.inputs, input{from: from, stream: stream, grouping: g})
	return d
}

// ErrInvalidTopology is wrapped by every error Build returns.
var ErrInvalidTopology = errors.New("topology: invalid topology")

// Build checks the declarations and returns the topology, or an error that
// lists every problem found.
func (b *Builder) Build() (*Topology, error) {
	var errs []error
	bad := func(id, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: component %q: %s", ErrInvalidTopology, id, fmt.Sprintf(format, args...)))
	}
	t := &Topology{byID: make(map[string]*component), types: b.types}
	for _, d := range b.decls {
		c := d.check(bad)
		if _, dup := t.byID[d.id]; dup {
			bad(d.id, "declared twice")
			continue
		}
		t.byID[d.id] = c
		t.components = append(t.components, c)
	}
	if len(t.components) == 0 {
		errs = append(errs, fmt.Errorf("%w: no components declared", ErrInvalidTopology))
	}
	for _, c := range t.components {
		t.checkInputs(c, bad)
	}
	if cycle := t.findCycle(); cycle != nil {
		errs = append(errs, fmt.Errorf("%w: bolts form a cycle: %s", ErrInvalidTopology, strings.Join(cycle, " -> ")))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	t.assignTasks()
	return t, nil
}

// check validates the declarer's own settings and returns its component.
func (d *Declarer) check(bad func(id, format string, args ...any)) *component {
	c := &component{id: d.id, spout: d.spout, newSpout: d.newSpout, newBolt: d.newBolt,
		parallelism: d.parallelism, tasks: d.tasks, inputs: d.inputs,
		outputs: make(map[string]*schema)}
	switch {
	case d.id == "":
		bad(d.id, "the id is empty")
	case strings.HasPrefix(d.id, "__"):
		bad(d.id, "ids starting with \"__\" are reserved for the runtime")
	}
	if d.newSpout == nil && d.newBolt == nil {
		bad(d.id, "the constructor is nil")
	}
	if d.parallelism < 1 {
		bad(d.id, "parallelism is %d; it must be at least 1", d.parallelism)
	}
	if c.tasks == 0 {
		c.tasks = max(d.parallelism, 1)
	}
	if c.tasks < d.parallelism {
		bad(d.id, "%d tasks cannot fill %d executors", c.tasks, d.parallelism)
	}
	if d.spout && len(d.inputs) > 0 {
		bad(d.id, "a spout cannot have inputs")
	}
	if !d.spout && len(d.inputs) == 0 {
		bad(d.id, "a bolt needs at least one input")
	}
	for _, s := range d.streams {
		if _, dup := c.outputs[s.name]; dup {
			bad(d.id, "stream %q declared twice", s.name)
			continue
		}
		if s.name == "" || strings.HasPrefix(s.name, "__") {
			bad(d.id, "stream name %q is empty or reserved", s.name)
		}
		for i, f := range s.fields {
			if f == "" || slices.Index(s.fields, f) != i {
				bad(d.id, "stream %q: field %q is empty or repeated", s.name, f)
			}
		}
		c.outputs[s.name] = newSchema(d.id, s.name, s.fields, s.direct)
	}
	return c
}

// checkInputs validates c's subscriptions against the declared streams.
func (t *Topology) checkInputs(c *component, bad func(id, format string, args ...any)) {
	for _, in := range c.inputs {
		src := t.byID[in.from]
		if src == nil {
			bad(c.id, "input from unknown component %q", in.from)
			continue
		}
		s := src.outputs[in.stream]
		if s == nil {
			bad(c.id, "input from %q: unknown stream %q (declared: %v)", in.from, in.stream, src.streamNames())
			continue
		}
		g := in.grouping
		switch {
		case g.kind == 0:
			bad(c.id, "input from %q/%s has no grouping", in.from, in.stream)
		case s.direct != (g.kind == groupDirect):
			bad(c.id, "input from %q/%s: the direct grouping and direct streams go together (stream direct: %v, grouping: %v)",
				in.from, in.stream, s.direct, g)
		case g.kind == groupFields && len(g.fields) == 0:
			bad(c.id, "input from %q/%s: fields grouping names no field", in.from, in.stream)
		case g.kind == groupCustom && g.newCustom == nil:
			bad(c.id, "input from %q/%s: custom grouping has a nil constructor", in.from, in.stream)
		}
		for _, f := range g.fields {
			if s.fields.Index(f) < 0 {
				bad(c.id, "input from %q/%s: fields grouping on unknown field %q (stream fields: %v)", in.from, in.stream, f, s.fields)
			}
		}
	}
}

// findCycle returns the ids along one cycle among the components, or nil.
func (t *Topology) findCycle() []string {
	const (
		unvisited = iota
		onPath
		finished
	)
	mark := make(map[string]int)
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		mark[id] = onPath
		path = append(path, id)
		for _, in := range t.byID[id].inputs {
			if t.byID[in.from] == nil {
				continue
			}
			switch mark[in.from] {
			case onPath:
				start := slices.Index(path, in.from)
				return append(append([]string(nil), path[start:]...), in.from)
			case unvisited:
				if c := visit(in.from); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[id] = finished
		return nil
	}
	for _, c := range t.components {
		if mark[c.id] == unvisited {
			if cycle := visit(c.id); cycle != nil {
				slices.Reverse(cycle)
				return cycle
			}
		}
	}
	return nil
}

// assignTasks numbers tasks densely, components in id order.
func (t *Topology) assignTasks() {
	slices.SortFunc(t.components, func(a, b *component) int { return strings.Compare(a.id, b.id) })
	next := TaskID(0)
	for _, c := range t.components {
		c.taskIDs = make([]TaskID, c.tasks)
		for i := range c.taskIDs {
			c.taskIDs[i] = next
			next++
		}
	}
	t.numTasks = int(next)
}
