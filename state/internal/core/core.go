// Package core holds what the opaque, transactional and non-transactional
// maps share: reading records through the per-commit cache, decoding them,
// and writing a call's records back in one MultiPut.
//
// A record R is a map flavour's decoded envelope, with user values still in
// their encoded bytes. Keeping user values encoded until an updater needs
// one is what makes the seed rule hold: every update decodes a fresh value,
// and an opaque map's prev is copied as bytes, never as a Go value an
// updater could modify.
package core

import (
	"context"
	"fmt"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/wire"
)

// Format converts a flavour's records to and from stored bytes.
type Format[R any] struct {
	Append func(dst []byte, r R) []byte
	Parse  func(b []byte) (R, error)
}

// Store is the shared machinery of one map. It is not safe for concurrent
// use; each map serializes its calls.
type Store[R any] struct {
	Backing state.BackingMap[[]byte]
	Name    string
	Format  Format[R]
	// Cache enables the per-commit read cache (Storm's
	// CachedBatchReadsMap): records written since BeginCommit are served
	// from memory and flagged Cached.
	Cache bool

	tx      state.TxID
	written map[string]R
}

// Begin starts a commit of txid and empties the per-commit cache.
func (s *Store[R]) Begin(txid state.TxID) {
	s.tx = txid
	s.written = nil
}

// End ends the current commit and empties the per-commit cache.
func (s *Store[R]) End() {
	s.tx = 0
	s.written = nil
}

// TxID returns the txid of the current commit, 0 outside one.
func (s *Store[R]) TxID() state.TxID { return s.tx }

// Slot is the current view of one key within a call.
type Slot[R any] struct {
	Rec   R
	Found bool
	// Cached: the record was written earlier in the current commit (by
	// this call or an earlier one), not read from the store.
	Cached bool
}

// Call is one MultiGet or MultiUpdate over a list of keys.
type Call[R any] struct {
	s       *Store[R]
	keys    []state.Key
	loaded  map[string]Slot[R]
	pending map[string]R
	order   []int // index of the first occurrence of each written key
}

// Load reads the records of keys: from the per-commit cache where
// possible, from the backing map otherwise, each distinct key once.
func (s *Store[R]) Load(ctx context.Context, keys []state.Key) (*Call[R], error) {
	c := &Call[R]{s: s, keys: keys, loaded: make(map[string]Slot[R], len(keys))}
	var fetch []state.Key
	for _, k := range keys {
		enc := k.Encoded()
		if _, ok := c.loaded[enc]; ok {
			continue
		}
		if r, ok := s.written[enc]; ok {
			c.loaded[enc] = Slot[R]{Rec: r, Found: true, Cached: true}
			continue
		}
		c.loaded[enc] = Slot[R]{}
		fetch = append(fetch, k)
	}
	if len(fetch) == 0 {
		return c, nil
	}
	got, err := s.Backing.MultiGet(ctx, fetch)
	if err != nil {
		return nil, state.WrapBackingError(s.Name, "get", len(fetch), err)
	}
	if len(got) != len(fetch) {
		return nil, state.WrapBackingError(s.Name, "get", len(fetch),
			fmt.Errorf("returned %d entries", len(got)))
	}
	for i, k := range fetch {
		if !got[i].Found {
			continue
		}
		r, err := s.Format.Parse(got[i].Val)
		if err != nil {
			return nil, state.Corrupt(s.Name, k, err)
		}
		c.loaded[k.Encoded()] = Slot[R]{Rec: r, Found: true}
	}
	return c, nil
}

// Blind starts a call that writes keys without reading them.
func (s *Store[R]) Blind(keys []state.Key) *Call[R] {
	return &Call[R]{s: s, keys: keys}
}

// Slot returns the current view of keys[i], including what this call has
// written so far.
func (c *Call[R]) Slot(i int) Slot[R] {
	enc := c.keys[i].Encoded()
	if r, ok := c.pending[enc]; ok {
		return Slot[R]{Rec: r, Found: true, Cached: c.s.Cache}
	}
	return c.loaded[enc]
}

// Set records r as the new record of keys[i], to be written by Flush.
func (c *Call[R]) Set(i int, r R) {
	enc := c.keys[i].Encoded()
	if c.pending == nil {
		c.pending = make(map[string]R)
	}
	if _, ok := c.pending[enc]; !ok {
		c.order = append(c.order, i)
	}
	c.pending[enc] = r
}

// Flush writes every record set by this call in one MultiPut, keys in the
// order of their first occurrence. On success the records join the
// per-commit cache; on failure nothing is cached, since the store may hold
// any subset of them.
func (c *Call[R]) Flush(ctx context.Context) error {
	if len(c.order) == 0 {
		return nil
	}
	keys := make([]state.Key, len(c.order))
	vals := make([][]byte, len(c.order))
	for j, i := range c.order {
		keys[j] = c.keys[i]
		vals[j] = c.s.Format.Append(nil, c.pending[keys[j].Encoded()])
	}
	if err := c.s.Backing.MultiPut(ctx, keys, vals); err != nil {
		return state.WrapBackingError(c.s.Name, "put", len(keys), err)
	}
	if c.s.Cache {
		if c.s.written == nil {
			c.s.written = make(map[string]R, len(c.pending))
		}
		for enc, r := range c.pending {
			c.s.written[enc] = r
		}
	}
	return nil
}

// Decode decodes a user value of keys[i] with codec, reporting failure as
// a corrupt stored value of that key.
func Decode[V, R any](c *Call[R], i int, codec state.Codec[V], raw []byte) (V, error) {
	v, err := codec.Unmarshal(raw)
	if err != nil {
		var zero V
		return zero, state.Corrupt(c.s.Name, c.keys[i], err)
	}
	return v, nil
}

// Encode encodes a new user value with codec and checks that the result is
// one msgpack value, as envelopes require.
func Encode[V any](codec state.Codec[V], v V) ([]byte, error) {
	raw, err := codec.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("state: encoding %T: %w", v, err)
	}
	if err := wire.CheckValue(raw); err != nil {
		return nil, fmt.Errorf("%w: %T: %v", state.ErrBadValue, v, err)
	}
	return raw, nil
}

// Name returns the map's name for errors.
func (c *Call[R]) Name() string { return c.s.Name }

// Key returns keys[i].
func (c *Call[R]) Key(i int) state.Key { return c.keys[i] }
