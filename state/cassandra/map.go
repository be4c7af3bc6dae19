package cassandra

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/squallstream/squall/state"
)

// Map is a state.BackingMap[[]byte] over one table. Each key is one
// partition: MultiGet runs one SELECT per distinct key and MultiPut one
// INSERT per distinct key (the last value of a repeated key), concurrently
// under the session's in-flight limit, as prepared, token-aware,
// idempotent statements. No multi-partition IN, no batches: each
// statement goes straight to a replica of its key.
//
// A MultiPut that fails may have written any subset of its keys; the map
// flavours above replay it. MultiDelete runs one DELETE per distinct key,
// the same way. A Map is safe for concurrent use.
type Map struct {
	t     *Table
	fence *fence
	owner state.Fence // the fence the map was opened with; zero: unfenced
	part  int         // the partition Keys lists, of parts (Backing)
	parts int         // 0 or 1: every key of the table (Open)
}

var (
	_ state.BackingMap[[]byte] = (*Map)(nil)
	_ state.Named              = (*Map)(nil)
	_ state.Concurrent         = (*Map)(nil)
	_ state.Deleter            = (*Map)(nil)
)

// Name implements state.Named: "cassandra keyspace.table".
func (m *Map) Name() string { return "cassandra " + m.t.name }

// ConcurrentSafe implements state.Concurrent.
func (m *Map) ConcurrentSafe() bool { return true }

// Table returns the map's table.
func (m *Map) Table() *Table { return m.t }

// Epoch returns the map's fencing epoch.
func (m *Map) Epoch() int64 { return m.fence.epoch }

// Fence returns the fence the map was opened with, and whether it was
// opened with one.
func (m *Map) Fence() (state.Fence, bool) { return m.owner, m.owner.Generation > 0 }

// MultiGet implements state.BackingMap.
func (m *Map) MultiGet(ctx context.Context, keys []state.Key) ([]state.Entry[[]byte], error) {
	out := make([]state.Entry[[]byte], len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	if err := m.check(ctx, "get", keys); err != nil {
		return nil, err
	}
	uniq, first := dedupe(keys)
	got := make([]state.Entry[[]byte], len(uniq))
	err := m.forEach(ctx, "get", keys, uniq, func(ctx context.Context, i int) error {
		args, err := m.bindKey(keys[uniq[i]])
		if err != nil {
			return err
		}
		dests := m.t.spec.newDests()
		iter := m.t.s.Statement(ctx, m.t.sel, args...).Iter()
		found := iter.Scan(dests...)
		if err := iter.Close(); err != nil {
			return err
		}
		if !found {
			return nil
		}
		v, err := m.t.spec.rebuild(dests)
		if err != nil { // a reported failure naming the key (state.DecodeError)
			return state.Corrupt(m.Name(), keys[uniq[i]], err)
		}
		got[i] = state.Entry[[]byte]{Val: v, Found: true}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for j, k := range keys {
		out[j] = got[first[k.Encoded()]]
	}
	return out, nil
}

// MultiPut implements state.BackingMap. All its statements carry the same
// write timestamp, the next of the map's fence. A ctx whose fence is of an
// older generation of the map's owner than the map's own is refused with
// a *state.FencedError.
func (m *Map) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	if len(keys) != len(vals) {
		return state.ErrLength
	}
	if len(keys) == 0 {
		return nil
	}
	if err := m.check(ctx, "put", keys); err != nil {
		return err
	}
	if f, ok := state.FenceOf(ctx); ok && f.Owner == m.owner.Owner && f.Generation < m.owner.Generation {
		return &state.FencedError{Where: "cassandra: put to " + m.t.name, Fence: f, Current: m.owner.Generation}
	}
	ts, err := m.fence.next()
	if err != nil {
		return err
	}
	uniq := lastOf(keys)
	return m.forEach(ctx, "put", keys, uniq, func(ctx context.Context, i int) error {
		j := uniq[i]
		args, err := m.bindKey(keys[j])
		if err != nil {
			return err
		}
		vs, err := m.t.spec.bindValues(vals[j])
		if err != nil {
			return err
		}
		args = append(append(args, vs...), ts)
		return m.t.s.Statement(ctx, m.t.ins, args...).Exec()
	})
}

// MultiDelete implements state.Deleter: one DELETE per distinct key, with
// the next write timestamp of the map's fence, so that a delete is fenced
// like a write: it removes what earlier writes of this map and of older
// maps stored, never a write of a map opened later. A ctx whose fence is
// of an older generation of the map's owner is refused with a
// *state.FencedError.
func (m *Map) MultiDelete(ctx context.Context, keys []state.Key) error {
	if len(keys) == 0 {
		return nil
	}
	if err := m.check(ctx, "delete", keys); err != nil {
		return err
	}
	if f, ok := state.FenceOf(ctx); ok && f.Owner == m.owner.Owner && f.Generation < m.owner.Generation {
		return &state.FencedError{Where: "cassandra: delete from " + m.t.name, Fence: f, Current: m.owner.Generation}
	}
	ts, err := m.fence.next()
	if err != nil {
		return err
	}
	uniq, _ := dedupe(keys)
	return m.forEach(ctx, "delete", keys, uniq, func(ctx context.Context, i int) error {
		args, err := m.bindKey(keys[uniq[i]])
		if err != nil {
			return err
		}
		return m.t.s.Statement(ctx, m.t.del, append([]any{ts}, args...)...).Exec()
	})
}

func (m *Map) check(ctx context.Context, op string, keys []state.Key) error {
	if err := ctx.Err(); err != nil {
		return state.Transient(m.opError(op, keys, len(keys), keys[0], err))
	}
	if m.t.s.isClosed() {
		return m.opError(op, keys, len(keys), keys[0], state.ErrClosed)
	}
	return nil
}

func (m *Map) opError(op string, keys []state.Key, failed int, k state.Key, err error) error {
	return Classify(&OpError{Table: m.t.name, Op: op, Keys: len(keys), Failed: failed, Key: k, Err: err})
}

// bindKey returns the key columns' arguments of k.
func (m *Map) bindKey(k state.Key) ([]any, error) {
	if len(m.t.spec.Keys) == 0 {
		return []any{[]byte(k.Encoded())}, nil
	}
	vals := k.Values()
	if len(vals) != len(m.t.spec.Keys) {
		return nil, fmt.Errorf("%w: key %v has %d values, table %s has %d key columns",
			state.ErrBadKey, k, len(vals), m.t.name, len(m.t.spec.Keys))
	}
	return vals, nil
}

// forEach runs fn for each index of uniq (keys[uniq[i]]) with at most
// MaxInFlight statements of this call in flight, each under a token of
// the session's limit. After the first failure it starts no more
// statements and returns an OpError with the count of failed statements.
func (m *Map) forEach(ctx context.Context, op string, keys []state.Key, uniq []int, fn func(context.Context, int) error) error {
	var (
		next     atomic.Int64
		stop     atomic.Bool
		mu       sync.Mutex
		failed   int
		firstErr error
		firstKey state.Key
		wg       sync.WaitGroup
	)
	fail := func(i int, err error) {
		stop.Store(true)
		mu.Lock()
		defer mu.Unlock()
		failed++
		if firstErr == nil {
			firstErr, firstKey = err, keys[uniq[i]]
		}
	}
	workers := min(len(uniq), cap(m.t.s.inFlight))
	for range workers {
		wg.Go(func() {
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(uniq) {
					return
				}
				if err := m.t.s.acquire(ctx); err != nil {
					fail(i, err)
					return
				}
				err := fn(ctx, i)
				m.t.s.release()
				if err != nil {
					fail(i, err)
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		return nil
	}
	return m.opError(op, keys, failed, firstKey, firstErr)
}

// dedupe returns the index in keys of each distinct key's first
// occurrence, and each encoding's position in that list.
func dedupe(keys []state.Key) (uniq []int, pos map[string]int) {
	pos = make(map[string]int, len(keys))
	for j, k := range keys {
		if _, ok := pos[k.Encoded()]; !ok {
			pos[k.Encoded()] = len(uniq)
			uniq = append(uniq, j)
		}
	}
	return uniq, pos
}

// lastOf returns the index in keys of each distinct key's last occurrence:
// the value a repeated key gets. Writing a key twice with one timestamp
// would let Cassandra pick the greater value, not the last.
func lastOf(keys []state.Key) []int {
	last := make(map[string]int, len(keys))
	for j, k := range keys {
		last[k.Encoded()] = j
	}
	uniq := make([]int, 0, len(last))
	for j, k := range keys {
		if last[k.Encoded()] == j {
			uniq = append(uniq, j)
		}
	}
	return uniq
}
