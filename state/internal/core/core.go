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
	"maps"
	"slices"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/wire"
	"github.com/squallstream/squall/txn"
)

// Format converts a flavour's records to and from stored bytes.
type Format[R any] struct {
	Append func(dst []byte, r R) []byte
	Parse  func(b []byte) (R, error)
	// Removed reports whether r is a tombstone (a key removed by the
	// record's batch). Nil means the flavour has none.
	Removed func(r R) bool
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
	// OnCorrupt, when set, decides what becomes of a stored value that
	// cannot be decoded (see state.CorruptHandler).
	OnCorrupt state.CorruptHandler

	tx      txn.TxID
	written map[string]R
	tombs   map[string]state.Key // keys whose cached record is a tombstone

	// The tombstones left by commit doneTx, the last one ended: deleted
	// from a backing map that can delete at the next Begin of a later
	// txid, when no replay of doneTx can need them any more.
	doneTx  txn.TxID
	pending []state.Key
}

// Begin starts a commit of txid and empties the per-commit cache.
//
// If the last commit ended left tombstones and txid is later, Begin first
// deletes them from the backing map, if it can delete (state.Deleter):
// batches are never replayed once a later one has begun, so nothing can
// read their prev again (Storm's MemoryMapState removes its tombstones at
// the next beginCommit of another txid). A failed delete fails Begin and
// keeps them for the next attempt; tombstones left in the store are
// harmless, they read as absent. A Begin of the same txid (a replay)
// forgets them: the replay leaves its own.
func (s *Store[R]) Begin(ctx context.Context, txid txn.TxID) error {
	if txid == 0 {
		return state.ErrNoTxID
	}
	if len(s.pending) > 0 {
		if txid > s.doneTx {
			if _, err := state.Delete(ctx, s.Backing, s.pending); err != nil {
				return state.WrapBackingError(s.Name, "delete", len(s.pending), err)
			}
		}
		s.pending = nil
	}
	s.tx = txid
	s.written = nil
	s.tombs = nil
	return nil
}

// End ends commit txid and empties the per-commit cache; ending a commit
// other than the current one is state.ErrNotBegun.
func (s *Store[R]) End(txid txn.TxID) error {
	if s.tx != txid {
		return fmt.Errorf("%w: commit of %v, begun %v", state.ErrNotBegun, txid, s.tx)
	}
	s.doneTx, s.pending = txid, nil
	for _, enc := range slices.Sorted(maps.Keys(s.tombs)) {
		s.pending = append(s.pending, s.tombs[enc])
	}
	s.tx = 0
	s.written = nil
	s.tombs = nil
	return nil
}

// Pending returns the tombstones the last ended commit left, which the
// next Begin of a later txid deletes.
func (s *Store[R]) Pending() []state.Key { return s.pending }

// NewStore returns a store over m named name, or after m when name is
// empty.
func NewStore[R any](m state.BackingMap[[]byte], name string, f Format[R], cache bool) Store[R] {
	if name == "" {
		name = state.NameOf(m)
	}
	return Store[R]{Backing: m, Name: name, Format: f, Cache: cache}
}

// TxID returns the txid of the current commit, 0 outside one.
func (s *Store[R]) TxID() txn.TxID { return s.tx }

// Slot is the current view of one key within a call.
type Slot[R any] struct {
	Rec   R
	Found bool
	// Cached: the record was written earlier in the current commit (by
	// this call or an earlier one), not read from the store.
	Cached bool
}

// Call is one MultiGet or MultiUpdate over a list of keys. Keys are
// numbered by first occurrence ("distinct keys") so that the per-key work
// indexes slices instead of maps.
type Call[R any] struct {
	s        *Store[R]
	keys     []state.Key
	idx      []int     // keys[i] is distinct key idx[i]
	first    []int     // distinct key d first occurs at keys[first[d]]
	slots    []Slot[R] // current view of each distinct key
	set      []bool    // distinct key d has a record to write
	nwritten int
}

// Load reads the records of keys: from the per-commit cache where
// possible, from the backing map otherwise, each distinct key once.
func (s *Store[R]) Load(ctx context.Context, keys []state.Key) (*Call[R], error) {
	c := s.Blind(keys)
	var fetch []int // distinct keys to read
	for d, i := range c.first {
		if r, ok := s.written[keys[i].Encoded()]; ok {
			c.slots[d] = Slot[R]{Rec: r, Found: true, Cached: true}
			continue
		}
		fetch = append(fetch, d)
	}
	if len(fetch) == 0 {
		return c, nil
	}
	fkeys := keys
	if len(fetch) != len(keys) {
		fkeys = make([]state.Key, len(fetch))
		for j, d := range fetch {
			fkeys[j] = keys[c.first[d]]
		}
	}
	got, err := s.Backing.MultiGet(ctx, fkeys)
	if err != nil {
		return nil, state.WrapBackingError(s.Name, "get", len(fkeys), err)
	}
	if len(got) != len(fkeys) {
		return nil, state.WrapBackingError(s.Name, "get", len(fkeys),
			fmt.Errorf("returned %d entries", len(got)))
	}
	for j, d := range fetch {
		if !got[j].Found {
			continue
		}
		r, err := s.Format.Parse(got[j].Val)
		if err != nil {
			if err := s.corrupt(ctx, fkeys[j], got[j].Val, err); err != nil {
				return nil, err
			}
			continue // taken by the handler: absent
		}
		c.slots[d] = Slot[R]{Rec: r, Found: true}
	}
	return c, nil
}

// Blind starts a call that writes keys without reading them: every key is
// seen as absent.
func (s *Store[R]) Blind(keys []state.Key) *Call[R] {
	c := &Call[R]{s: s, keys: keys, idx: make([]int, len(keys))}
	seen := make(map[string]int, len(keys))
	for i, k := range keys {
		enc := k.Encoded()
		d, ok := seen[enc]
		if !ok {
			d = len(c.first)
			seen[enc] = d
			c.first = append(c.first, i)
		}
		c.idx[i] = d
	}
	c.slots = make([]Slot[R], len(c.first))
	c.set = make([]bool, len(c.first))
	return c
}

// Slot returns the current view of keys[i], including what this call has
// set so far.
func (c *Call[R]) Slot(i int) Slot[R] { return c.slots[c.idx[i]] }

// Set records r as the new record of keys[i], to be written by Flush.
// Later Slot calls for the key see it, flagged Cached when the store
// caches.
func (c *Call[R]) Set(i int, r R) {
	d := c.idx[i]
	c.slots[d] = Slot[R]{Rec: r, Found: true, Cached: c.s.Cache}
	if !c.set[d] {
		c.set[d] = true
		c.nwritten++
	}
}

// Flush writes every record set by this call in one MultiPut, keys in the
// order of their first occurrence. On success the records join the
// per-commit cache; on failure nothing is cached, since the store may hold
// any subset of them.
func (c *Call[R]) Flush(ctx context.Context) error {
	if c.nwritten == 0 {
		return nil
	}
	keys := make([]state.Key, 0, c.nwritten)
	vals := make([][]byte, 0, c.nwritten)
	for d, ok := range c.set {
		if ok {
			keys = append(keys, c.keys[c.first[d]])
			vals = append(vals, c.s.Format.Append(nil, c.slots[d].Rec))
		}
	}
	if err := c.s.Backing.MultiPut(ctx, keys, vals); err != nil {
		return state.WrapBackingError(c.s.Name, "put", len(keys), err)
	}
	if c.s.Cache {
		if c.s.written == nil {
			c.s.written = make(map[string]R, len(keys))
		}
		for d, ok := range c.set {
			if !ok {
				continue
			}
			k := c.keys[c.first[d]]
			c.s.written[k.Encoded()] = c.slots[d].Rec
			switch {
			case c.s.Format.Removed != nil && c.s.Format.Removed(c.slots[d].Rec):
				if c.s.tombs == nil {
					c.s.tombs = make(map[string]state.Key)
				}
				c.s.tombs[k.Encoded()] = k
			case c.s.tombs != nil:
				delete(c.s.tombs, k.Encoded())
			}
		}
	}
	return nil
}

// Get loads keys and decodes, for each, the encoded user value pick
// chooses from its slot: one entry per key, absent where pick finds none
// or the OnCorrupt handler takes the value (see Decode).
func Get[V, R any](ctx context.Context, s *Store[R], keys []state.Key, codec state.Codec[V],
	pick func(c *Call[R], i int) (state.Entry[[]byte], error)) ([]state.Entry[V], error) {
	c, err := s.Load(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]state.Entry[V], len(keys))
	for i := range keys {
		raw, err := pick(c, i)
		if err != nil {
			return nil, err
		}
		if raw.Found {
			if out[i].Val, out[i].Found, err = Decode(ctx, c, i, codec, raw.Val); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Decode decodes a user value of keys[i] with codec and reports whether
// there is one. A value that cannot be decoded is a corrupt stored value
// of that key: unless the store's OnCorrupt handler takes it, Decode fails
// with state.Corrupt's error; if the handler takes it, the key becomes
// absent for the rest of the call (Slot(i).Found is false) and Decode
// returns the zero V and false.
func Decode[V, R any](ctx context.Context, c *Call[R], i int, codec state.Codec[V], raw []byte) (V, bool, error) {
	v, err := codec.Unmarshal(raw)
	if err != nil {
		var zero V
		if err := c.s.corrupt(ctx, c.keys[i], raw, err); err != nil {
			return zero, false, err
		}
		c.slots[c.idx[i]] = Slot[R]{}
		return zero, false, nil
	}
	return v, true, nil
}

// corrupt handles the undecodable stored value raw of key: nil if the
// OnCorrupt handler took it, else the error to fail the call with.
func (s *Store[R]) corrupt(ctx context.Context, key state.Key, raw []byte, cause error) error {
	if s.OnCorrupt == nil {
		return state.Corrupt(s.Name, key, cause)
	}
	de := &state.DecodeError{Map: s.Name, Key: key, Raw: append([]byte(nil), raw...), Err: cause}
	if err := s.OnCorrupt(ctx, de); err != nil {
		return fmt.Errorf("state: %s: handling the corrupt value of key %v: %w", s.Name, key, err)
	}
	return nil
}

// Encode encodes a new user value with codec and checks that the result is
// one msgpack value, as envelopes require.
func Encode[V any](codec state.Codec[V], v V) ([]byte, error) {
	raw, err := codec.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("state: encoding %T: %w", v, err)
	}
	if _, trusted := codec.(state.Msgpack[V]); trusted {
		return raw, nil
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

// Volatile reports whether the backing map keeps its data in memory only
// (state.Volatile).
func (s *Store[R]) Volatile() bool { return state.IsVolatile(s.Backing) }
