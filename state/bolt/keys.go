package bolt

import (
	"bytes"
	"context"
	"fmt"
	"iter"

	bbolt "go.etcd.io/bbolt"
	bberrors "go.etcd.io/bbolt/errors"

	"github.com/squallstream/squall/state"
)

var _ state.KeyLister = (*Map)(nil)

// keysPage is how many keys Keys reads in one read transaction: no
// transaction stays open while the caller handles the keys.
const keysPage = 1024

// Keys yields the stored keys in the order of their encodings
// (state.KeyLister), reading keysPage of them per read transaction, so
// a write between two pages may or may not be seen.
func (m *Map) Keys(ctx context.Context) iter.Seq2[state.Key, error] {
	return func(yield func(state.Key, error) bool) {
		var after []byte // the last key yielded; nil before the first
		for {
			if m.closed.Load() {
				yield(state.Key{}, fmt.Errorf("bolt: %s: keys: %w", m.name, state.ErrClosed))
				return
			}
			if err := ctx.Err(); err != nil {
				yield(state.Key{}, m.classify("keys", err))
				return
			}
			page, err := m.keysAfter(after)
			if err != nil {
				yield(state.Key{}, m.classify("keys", err))
				return
			}
			for _, enc := range page {
				k, err := state.DecodeKey(enc)
				if err != nil {
					err = fmt.Errorf("bolt: %s: stored key: %w", m.name, err)
				}
				if !yield(k, err) || err != nil {
					return
				}
			}
			if len(page) < keysPage {
				return
			}
			after = page[len(page)-1]
		}
	}
}

// keysAfter returns copies of up to keysPage stored keys that sort after
// after (from the first key when after is nil).
func (m *Map) keysAfter(after []byte) ([][]byte, error) {
	var page [][]byte
	err := m.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(m.bucket)
		if b == nil {
			return bberrors.ErrBucketNotFound
		}
		c := b.Cursor()
		k, _ := c.First()
		if after != nil {
			k, _ = c.Seek(after)
			if k != nil && bytes.Equal(k, after) {
				k, _ = c.Next()
			}
		}
		for ; k != nil && len(page) < keysPage; k, _ = c.Next() {
			page = append(page, bytes.Clone(k))
		}
		return nil
	})
	return page, err
}
