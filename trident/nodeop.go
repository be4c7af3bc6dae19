package trident

import (
	"context"

	"github.com/squallstream/squall/trident/internal/plan"
)

// op is what a node does: one struct per kind of operation, each with
// only its own fields. The graph description for the planner (graph.go)
// and the stage processor (stage.go) switch on its type.
type op interface {
	// kind names the operation in a printed plan.
	kind() string
}

// sourceOp reads a stream from a source; it starts a stage.
type sourceOp struct{ src *Source }

// eachOp runs a Function on the input fields and appends what it emits.
type eachOp struct {
	fn    Function
	inIdx []int   // input positions in the parent's tuple
	inSch *schema // input fields
}

type filterOp struct{ f Filter }

type mapOp struct{ fn MapFunction }

type flatMapOp struct{ fn FlatMapFunction }

type peekOp struct{ fn func(Tuple) }

// projectOp keeps the fields at idx of the parent's tuple.
type projectOp struct{ idx []int }

// partitionOp is a repartition: it starts a stage, which receives the
// parent's tuples with the partitioning how (by fields for ByFields).
type partitionOp struct {
	how    plan.Partitioning
	fields Fields
}

// mergeOp is the union of its node's parents; it starts a stage.
type mergeOp struct{}

// aggregateOp aggregates each batch (per group of GroupBy), emitting at
// its end.
type aggregateOp struct{ agg aggregator }

// persistOp writes each batch to state in the batch's commit phase; its
// stage is a committer.
type persistOp struct {
	p     persister
	inSch *schema // input fields
}

// queryOp queries state in the batch's commit phase. It runs in the stage
// of the node that writes the state, or, for static state, in its parent's.
type queryOp struct {
	q      querier
	inSch  *schema // input fields
	state  *node   // the node that writes the state; nil for static state
	byKeys bool    // route by the input fields (map state keyed by group)
	static func(ctx context.Context, partition, numPartitions int) (any, error)
}

// joinOp joins its node's two parents by keys; it starts a stage.
type joinOp struct {
	plan *joinPlan
	keys [2]Fields // the keys of each side
}

func (*sourceOp) kind() string    { return "source" }
func (*eachOp) kind() string      { return "each" }
func (*filterOp) kind() string    { return "filter" }
func (*mapOp) kind() string       { return "map" }
func (*flatMapOp) kind() string   { return "flatMap" }
func (*peekOp) kind() string      { return "peek" }
func (*projectOp) kind() string   { return "project" }
func (*partitionOp) kind() string { return "partition" }
func (*mergeOp) kind() string     { return "merge" }
func (*aggregateOp) kind() string { return "aggregate" }
func (*persistOp) kind() string   { return "persist" }
func (*queryOp) kind() string     { return "query" }
func (*joinOp) kind() string      { return "join" }

// source returns the source of a source node.
func (n *node) source() *Source { return n.op.(*sourceOp).src }
