package cassandra

import (
	"context"
	"fmt"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/state"
)

var errNotFound = gocql.ErrNotFound

// Table is a checked state table (from EnsureTable or OpenTable). Open
// (or Backing) returns backing maps over it; several maps may share a
// table, one per partition of a persistent aggregation, since a group-by
// sends each key to one partition.
type Table struct {
	s        *Session
	spec     TableSpec
	name     string // keyspace.table
	sel, ins string
	del      string
}

func newTable(s *Session, spec TableSpec) *Table {
	t := &Table{s: s, spec: spec, name: s.cfg.Keyspace + "." + spec.Name}
	t.sel, t.ins = spec.statements(s.cfg.Keyspace)
	t.del = spec.deleteStatement(s.cfg.Keyspace)
	return t
}

// Name returns keyspace.table.
func (t *Table) Name() string { return t.name }

// Spec returns the table's spec.
func (t *Table) Spec() TableSpec { return t.spec }

// Open returns a new backing map over the table with a fencing epoch of
// its own (see docs/cassandra.md): its writes win over those of every map
// opened before it, whenever they arrive.
//
// If ctx carries a fence (state.WithFence), the epoch follows its
// generation: Open fails with a *state.FencedError (fatal: the process
// was superseded and must stop) if a newer generation has opened a map of
// this table, and every map it returns outranks every map of an older
// generation. Without a fence (tools, tests) the map is unfenced: it takes
// a new epoch whatever the generations, and it outranks every map opened
// before it, owners' included.
func (t *Table) Open(ctx context.Context) (*Map, error) {
	if t.s.isClosed() {
		return nil, fmt.Errorf("cassandra: open %s: %w", t.name, state.ErrClosed)
	}
	f, _ := state.FenceOf(ctx) // the zero Fence when unfenced
	epoch, err := t.s.nextEpoch(ctx, t.name, f)
	if err != nil {
		return nil, err
	}
	t.s.log.Debug("cassandra: opened a backing map", "table", t.name, "epoch", epoch, "fence", f)
	return &Map{t: t, fence: &fence{epoch: epoch}, owner: f}, nil
}

// Backing opens a map for one partition of a persistent aggregation. Its
// signature is trident.BackingFactory's, so a table plugs into a topology
// as trident.Opaque[int64]("counts", table.Backing). Every call, also a
// worker's restart, takes a new fencing epoch; with the owner's fence in
// ctx, as the Trident runtime passes it, a superseded owner's call fails
// (see Open).
//
// The map's Keys lists the keys of its partition only, the share of the
// table trident routes to it (see Map.Keys). partition must be in
// [0, numPartitions).
func (t *Table) Backing(ctx context.Context, partition, numPartitions int) (state.BackingMap[[]byte], error) {
	if numPartitions < 1 || partition < 0 || partition >= numPartitions {
		return nil, fmt.Errorf("%w: %s: partition %d of %d", ErrConfig, t.name, partition, numPartitions)
	}
	m, err := t.Open(ctx)
	if err != nil {
		return nil, err
	}
	m.part, m.parts = partition, numPartitions
	return m, nil
}
