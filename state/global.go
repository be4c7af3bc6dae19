package state

import (
	"context"

	"github.com/squallstream/squall/txn"
)

// globalKeyName is the single key under which Global stores its value.
const globalKeyName = "$squall-global$"

// GlobalKey returns the key Global uses when none is given.
func GlobalKey() Key { return MustKey(globalKeyName) }

// Global is a Snapshottable kept under one key of a MapState, so that an
// ungrouped aggregate (a global count) gets the same exactly-once
// treatment as grouped ones. It is Storm's SnapshottableMap.
type Global[V any] struct {
	m   MapState[V]
	key Key
}

var _ Snapshottable[int] = (*Global[int])(nil)

// NewGlobal returns the Snapshottable stored in m under key, or under
// GlobalKey() when key is the zero Key.
func NewGlobal[V any](m MapState[V], key Key) *Global[V] {
	if key.Len() == 0 {
		key = GlobalKey()
	}
	return &Global[V]{m: m, key: key}
}

// BeginCommit begins a commit of the underlying map.
func (g *Global[V]) BeginCommit(ctx context.Context, txid txn.TxID) error {
	return g.m.BeginCommit(ctx, txid)
}

// Commit commits the underlying map.
func (g *Global[V]) Commit(ctx context.Context, txid txn.TxID) error {
	return g.m.Commit(ctx, txid)
}

// Get returns the value and whether it is present.
func (g *Global[V]) Get(ctx context.Context) (V, bool, error) {
	es, err := g.m.MultiGet(ctx, []Key{g.key})
	if err != nil {
		var zero V
		return zero, false, err
	}
	return es[0].Val, es[0].Found, nil
}

// Update applies u and returns the new value.
func (g *Global[V]) Update(ctx context.Context, u ValueUpdater[V]) (V, error) {
	vs, err := g.m.MultiUpdate(ctx, []Key{g.key}, []ValueUpdater[V]{u})
	if err != nil {
		var zero V
		return zero, err
	}
	return vs[0], nil
}

// Set replaces the value.
func (g *Global[V]) Set(ctx context.Context, v V) error {
	return g.m.MultiPut(ctx, []Key{g.key}, []V{v})
}
