package cassandra

import (
	"context"
	"fmt"
	"iter"
	"reflect"
	"strings"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/state"
)

var _ state.KeyLister = (*Map)(nil)

// Keys implements state.KeyLister: it yields the keys of the map's
// partition, so that ops.TupleCollectionGet over a state held in
// Cassandra gets every key once, from the partition that owns it. Every
// partition's map shares one table, so Keys scans the whole table, in
// token order, Config.KeysPageSize rows per request (gocql paging, one
// page at a time under the session's in-flight limit, none held while the
// caller handles the keys), and keeps the keys that trident's fields
// grouping routes to this partition (the FNV-1a hash of the key encoding
// modulo the number of partitions, as topology.ByFields computes it). A
// map from Table.Open, not Backing, lists every key of the table.
//
// Cost: a query that lists a state of n partitions makes n full scans of
// the table, each reading every key (not the values; state.Tuples then
// reads the values of the partition's own keys). That suits occasional
// reads of modest tables (a dashboard, a test, an export), not a query per
// batch of a large one.
//
// Keys come back as the key columns scan: the k blob column decodes to
// the original key (state.DecodeKey: integers as the smallest fitting Go
// integer type); typed key columns (TableSpec.Keys) rebuild each value as
// gocql's natural Go type for the column (text: string, bigint: int64,
// int: int, timestamp: time.Time in UTC, blob: []byte...), which is the
// same key as the one written when its values had those types, or any
// integer type for an integer column (integers encode by value). A
// timestamp column keeps milliseconds only, so a key written with a finer
// time is listed as the millisecond it was stored under.
//
// A failed request or a stored key that cannot be rebuilt yields the
// error (classified like a read's: a timeout is retryable) with the zero
// Key and ends the sequence. Rows written while the sequence is ranged
// may or may not be seen; removed values (a null value column) are listed
// and read back as absent, deleted rows are not listed.
func (m *Map) Keys(ctx context.Context) iter.Seq2[state.Key, error] {
	return func(yield func(state.Key, error) bool) {
		var pageState []byte // nil: the first page
		for {
			keys, next, err := m.keysPage(ctx, pageState)
			for _, k := range keys {
				if !yield(k, nil) {
					return
				}
			}
			if err != nil {
				yield(state.Key{}, err)
				return
			}
			if len(next) == 0 {
				return
			}
			pageState = next
		}
	}
}

// keysPage reads one page of the table's keys from pageState (nil: the
// first page) and returns those of the map's partition and the paging
// state of the next page (empty after the last page). On error it returns
// the keys of the page before the failure.
func (m *Map) keysPage(ctx context.Context, pageState []byte) (keys []state.Key, next []byte, err error) {
	fail := func(err error) error {
		return Classify(fmt.Errorf("cassandra: %s: keys: %w", m.t.name, err))
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, state.Transient(fail(err))
	}
	if m.t.s.isClosed() {
		return nil, nil, fail(state.ErrClosed)
	}
	if err := m.t.s.acquire(ctx); err != nil {
		return nil, nil, state.Transient(fail(err))
	}
	defer m.t.s.release()
	q := m.t.s.Statement(ctx, m.t.spec.keysStatement(m.t.s.cfg.Keyspace)).
		PageSize(m.t.s.cfg.keysPageSize()).PageState(pageState) // one page per request
	it := q.Iter()
	next = it.PageState()
	for {
		k, ok, err := m.scanKey(it)
		if err != nil {
			_ = it.Close()
			return keys, nil, Classify(err)
		}
		if !ok {
			break
		}
		if m.parts <= 1 || keyPartition(k.Encoded(), m.parts) == m.part {
			keys = append(keys, k)
		}
	}
	if err := it.Close(); err != nil {
		return keys, nil, fail(err)
	}
	return keys, next, nil
}

// scanKey scans the next row of it into a key. It returns false after
// the last row of the page (or a failed request: Close tells).
func (m *Map) scanKey(it *gocql.Iter) (state.Key, bool, error) {
	var dests []any
	if len(m.t.spec.Keys) == 0 {
		dests = []any{new([]byte)}
	} else {
		row, err := it.RowData() // new destinations of the columns' Go types
		if err != nil {
			return state.Key{}, false, fmt.Errorf("cassandra: %s: keys: %w", m.t.name, err)
		}
		dests = row.Values
	}
	if !it.Scan(dests...) {
		return state.Key{}, false, nil
	}
	k, err := m.t.spec.keyOf(dests)
	if err != nil {
		return state.Key{}, false, fmt.Errorf("cassandra: %s: stored key: %w", m.t.name, err)
	}
	return k, true, nil
}

// keysStatement returns the SELECT of every row's key columns.
func (t TableSpec) keysStatement(keyspace string) string {
	var cols []string
	for _, c := range t.keyColumns() {
		cols = append(cols, c.Name)
	}
	return fmt.Sprintf("SELECT %s FROM %s.%s", strings.Join(cols, ", "), keyspace, t.Name)
}

// keyOf rebuilds a key from the scanned key columns: dests are pointers
// to the columns' values (for the default k blob column, a *[]byte
// holding the key encoding).
func (t TableSpec) keyOf(dests []any) (state.Key, error) {
	if len(t.Keys) == 0 {
		return state.DecodeKey(*dests[0].(*[]byte))
	}
	if len(dests) != len(t.Keys) { // a tuple column scans as one value per element
		return state.Key{}, fmt.Errorf("%w: %d key columns scanned as %d values", state.ErrBadKey, len(t.Keys), len(dests))
	}
	vals := make([]any, len(dests))
	for i, d := range dests {
		vals[i] = reflect.ValueOf(d).Elem().Interface()
	}
	return state.NewKey(vals...)
}
