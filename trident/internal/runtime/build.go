package runtime

import (
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident/internal/plan"
	"github.com/squallstream/squall/txn"
)

// MasterComponent is the id of the master coordinator spout.
const MasterComponent = "$master"

// Streams of the generated topology.
const (
	streamBatch   = "$batch"   // master -> source stages: a batch to emit
	streamFreeze  = "$freeze"  // master -> source stages: freeze a batch before commit
	streamCommit  = "$commit"  // master -> committer stages: write a batch
	streamSuccess = "$success" // master -> all stages: a batch committed
	streamReport  = "$report"  // stage -> downstream tasks: tuples sent for a batch
	fieldBatch    = "$batch"   // field 0 of every data tuple: the batch attempt
)

// Build generates the tuple-level topology of spec: the master
// coordinator spout and one bolt per stage, all sharing st. It fails only
// if the topology builder refuses the result.
func Build(spec Spec, cfg Config, st *Status) (*topology.Topology, error) {
	b := topology.NewBuilder()
	types := valueTypes() // attempts and announcements cross workers in cluster mode
	if spec.ValueTypes != nil {
		if err := spec.ValueTypes(types); err != nil {
			return nil, err
		}
	}
	b.ValueTypes(types)
	tally := newSourceTally(spec.Plan)
	spec.Sources = tallySources(spec.Sources, tally)
	ms := b.Spout(MasterComponent, func() topology.Spout {
		return &master{name: spec.Name, sourceSpecs: spec.Sources, cfg: cfg, store: cfg.Store, status: st, tally: tally}
	})
	ms.OutputStream(streamBatch, "msg").OutputStream(streamFreeze, "msg").
		OutputStream(streamCommit, "msg").OutputStream(streamSuccess, "msg")
	p := spec.Plan
	for _, s := range p.Stages {
		d := b.Bolt(s.Name, newStageBolt(spec, s, &cfg, st)).Parallelism(s.Parallelism)
		d.DirectStream(streamReport, fieldBatch, "count")
		d.InputStream(MasterComponent, streamSuccess, topology.All())
		if s.IsSource() {
			d.InputStream(MasterComponent, streamBatch, topology.All())
			d.InputStream(MasterComponent, streamFreeze, topology.All())
		}
		if s.Committer {
			d.InputStream(MasterComponent, streamCommit, topology.All())
		}
		for _, up := range s.Upstream {
			d.InputStream(up.Name, streamReport, topology.Direct())
		}
		for _, n := range s.Nodes {
			if stream := p.Fanout(n).Stream; stream != "" {
				d.OutputStream(stream, append(topology.Fields{fieldBatch}, n.Fields...)...)
			}
		}
		for _, in := range s.Inputs {
			d.InputStream(in.Up.Name, in.Stream(), grouping(in.Route()))
		}
	}
	return b.Build()
}

// grouping returns the tuple-level grouping of a route.
func grouping(r plan.Route) topology.Grouping {
	switch r.How {
	case plan.LocalOrShuffle:
		return topology.LocalOrShuffle()
	case plan.ByFields:
		return topology.ByFields(r.Fields...)
	case plan.Global:
		return topology.Global()
	case plan.Broadcast:
		return topology.All()
	case plan.BatchGlobal:
		return topology.Custom(func() topology.CustomGrouping { return &batchGrouping{} })
	default:
		return topology.Shuffle()
	}
}

// batchGrouping sends all tuples of a batch to the task its txid selects.
type batchGrouping struct{ targets []topology.TaskID }

func (g *batchGrouping) Prepare(targets []topology.TaskID) { g.targets = targets }

func (g *batchGrouping) ChooseTasks(_ topology.TaskID, v topology.Values, dst []topology.TaskID) []topology.TaskID {
	txid := uint64(v[0].(txn.Attempt).TxID)
	return append(dst, g.targets[txid%uint64(len(g.targets))])
}
