package state

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// KeyLister is a backing map that can list the keys it holds. It is
// optional, found by type assertion: Memory and bolt maps list their
// keys (one map per partition), LRU lists the keys of the map it wraps,
// and a Cassandra map lists the keys of its partition by scanning the
// table every partition shares (a full table scan per partition per
// listing; see state/cassandra's Map.Keys). A map of one partition of a
// state lists that partition's keys only, so that listing every
// partition yields each key once.
//
// The map flavours (opaque, transactional, non-transactional) list what
// they hold through it: see Tuples.
type KeyLister interface {
	// Keys yields every key stored, once, in the order of their
	// encodings. It may include keys a map state reads as absent (the
	// tombstones of removed keys). To end early on failure it yields a
	// non-nil error with the zero Key. Writes while the sequence is
	// ranged may or may not be seen.
	Keys(ctx context.Context) iter.Seq2[Key, error]
}

// ErrNotListable: the backing map of a map state cannot list its keys
// (it is not a KeyLister), so the state cannot be read whole.
var ErrNotListable = errors.New("state: the backing map cannot list its keys")

// ListKeys returns m's keys if m is a KeyLister, and otherwise a sequence
// that yields only an error matching ErrNotListable, naming m.
func ListKeys(ctx context.Context, m any) iter.Seq2[Key, error] {
	if l, ok := m.(KeyLister); ok {
		return l.Keys(ctx)
	}
	return func(yield func(Key, error) bool) {
		yield(Key{}, fmt.Errorf("%w: %s", ErrNotListable, mapName(m)))
	}
}

// mapName names m in an error: its Name if it has one, else its type.
func mapName(m any) string {
	if n, ok := m.(Named); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", m)
}

// listChunk is how many listed keys Tuples reads with one MultiGet.
const listChunk = 256

// Tuples lists what map state m holds as tuples, as Storm's
// ITupleCollection does for its MemoryMapState: for every key of keys
// that m reads as present, the key's values followed by the value m
// reads for it (outside a commit, the latest value; see
// ReadOnlyMapState). Keys are read back with MultiGet, listChunk at a
// time, so removed keys and tombstones are skipped and the flavour's
// decoding applies. Key values come back as DecodeKey rebuilds them
// (integers as the smallest fitting Go integer type).
//
// An error of keys or of MultiGet is yielded, with a nil tuple, and ends
// the sequence.
func Tuples[V any](ctx context.Context, m ReadOnlyMapState[V], keys iter.Seq2[Key, error]) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		chunk := make([]Key, 0, listChunk)
		flush := func() bool {
			if len(chunk) == 0 {
				return true
			}
			got, err := m.MultiGet(ctx, chunk)
			if err == nil && len(got) != len(chunk) {
				err = fmt.Errorf("state: map returned %d entries for %d keys", len(got), len(chunk))
			}
			if err != nil {
				yield(nil, err)
				return false
			}
			for i, e := range got {
				if !e.Found {
					continue
				}
				if !yield(append(chunk[i].Values(), e.Val), nil) {
					return false
				}
			}
			chunk = chunk[:0]
			return true
		}
		for k, err := range keys {
			if err != nil {
				yield(nil, err)
				return
			}
			if chunk = append(chunk, k); len(chunk) == listChunk && !flush() {
				return
			}
		}
		flush()
	}
}
