package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a node means to the planner.
type Kind uint8

const (
	// Source reads a stream from a source; it starts a source stage.
	Source Kind = iota + 1
	// Op runs in its parent's stage (each, filter, map, aggregate...).
	Op
	// Partition is a repartition of its parent; it starts a stage, unless
	// nothing reads it.
	Partition
	// Merge is the union of its parents; it starts a stage.
	Merge
	// Join joins its two parents by keys; it starts a stage.
	Join
	// Persist writes state in the commit phase; it runs in its parent's
	// stage and makes that stage a committer.
	Persist
	// Query reads state in the commit phase: it runs in the stage of the
	// node that writes the state (State), or, for static state, in its
	// parent's. Its tuples reach the state's tasks by the query's route
	// (see Node.route): every task when the query asks all partitions
	// (AllPartitions) or follows a Broadcast repartition, the task of
	// their key for ByKeys, any one task otherwise.
	Query
)

// Node is one declared operation, as far as planning goes. Nodes of a
// graph are numbered from 0 in declaration order (ID is the position),
// so parents come before their children.
type Node struct {
	ID      int
	Kind    Kind
	Name    string   // the operation's name in a printed plan: "each", "filter"...
	Parents []*Node  // none for a source, two or more for a merge, two for a join
	Fields  []string // output fields
	In      []string // input fields; printed as in=[...] when not nil
	Hint    int      // parallelism hint, 0 if none; for a source, its task count
	Label   string   // the user's name of its section, "" if none: bolt stages append their nodes' labels to their names
	Load    Load     // resources the operation needs per task (Storm's setCPULoad/setMemoryLoad); summed per stage

	Route  Route       // Partition: how the tuples are spread
	Keys   [2][]string // Join: the keys of each side
	Stream string      // Source: the stream's id
	State  *Node       // Query: the node that writes the state; nil for static state
	ByKeys bool        // Query: tuples go to the partition of their In values
	// AllPartitions (Query): every task of the state's stage answers each
	// tuple from its own partition, as after a Broadcast repartition.
	AllPartitions bool

	// Payload is the API layer's operation; the planner never looks at it.
	Payload any
}

// Load is what an operation, or a stage, needs of a machine per task:
// CPU in percent of one core (100 is a core, as in Storm) and memory in
// MB. The zero Load asks for nothing.
type Load struct {
	CPU      int
	MemoryMB int
}

// Add returns the sum of l and o.
func (l Load) Add(o Load) Load { return Load{CPU: l.CPU + o.CPU, MemoryMB: l.MemoryMB + o.MemoryMB} }

// IsZero reports whether l asks for nothing.
func (l Load) IsZero() bool { return l == Load{} }

func (l Load) String() string { return fmt.Sprintf("cpu=%d%%,memory=%dMB", l.CPU, l.MemoryMB) }

func (n *Node) String() string { return "n" + strconv.Itoa(n.ID) }

// Partitioning is how tuples are spread over the tasks of the stage that
// receives them.
type Partitioning uint8

const (
	Shuffle Partitioning = iota + 1
	ByFields
	Global
	Broadcast
	BatchGlobal    // all tuples of a batch to one task, chosen by its txid
	LocalOrShuffle // a merge's input: no declared repartition
)

func (p Partitioning) String() string {
	switch p {
	case Shuffle:
		return "shuffle"
	case ByFields:
		return "fields"
	case Global:
		return "global"
	case Broadcast:
		return "broadcast"
	case BatchGlobal:
		return "batchGlobal"
	case LocalOrShuffle:
		return "localOrShuffle"
	}
	return fmt.Sprintf("partitioning(%d)", uint8(p))
}

// Route is how tuples reach an entry node of a stage from another stage:
// a partitioning and, for ByFields, the fields it hashes.
type Route struct {
	How    Partitioning
	Fields []string
}

func (r Route) String() string {
	if r.How == ByFields {
		return "fields(" + strings.Join(r.Fields, ",") + ")"
	}
	return r.How.String()
}

// route returns how n's stage receives n's input number side. It is the
// one place that decides the grouping: the runtime turns it into a
// tuple-level grouping, and the printed plan shows it.
func (n *Node) route(side int) Route {
	switch n.Kind {
	case Merge:
		return Route{How: LocalOrShuffle}
	case Query:
		switch {
		case n.AllPartitions || n.absorbs():
			return Route{How: Broadcast}
		case n.ByKeys:
			return Route{How: ByFields, Fields: n.In}
		}
		return Route{How: Shuffle}
	case Join:
		return Route{How: ByFields, Fields: n.Keys[side]}
	case Partition:
		if n.Route.How == ByFields {
			return Route{How: ByFields, Fields: n.Route.Fields}
		}
		return Route{How: n.Route.How}
	}
	return Route{How: Shuffle}
}

// absorbs reports whether n is a query of written state right after a
// Broadcast repartition (Storm's broadcast().stateQuery(...)): its tuples
// reach every task of the state's stage, each answering from its own
// partition.
func (n *Node) absorbs() bool {
	if n.Kind != Query || n.State == nil || len(n.Parents) != 1 {
		return false
	}
	p := n.Parents[0]
	return p.Kind == Partition && p.Route.How == Broadcast
}
