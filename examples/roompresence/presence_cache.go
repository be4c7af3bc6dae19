package main

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/squallstream/squall/examples/roompresence/room"
)

// writtenHalves remembers, for the most recently written open visits, the
// halves of their presence rows that this process has written and the
// store acknowledged. A presence row only grows (an UPDATE sets the
// columns it names and never clears one), so the stored row always holds
// at least what is remembered here, whoever else writes it and whatever
// batches are replayed: when a batch brings a visit's other half, the
// remembered half completes it without reading the row back. A visit
// that is not remembered (evicted, or written by another process before a
// restart) is read back as before.
//
// It is safe for concurrent use.
type writtenHalves struct {
	mu    sync.Mutex
	cache *simplelru.LRU[string, room.Period] // by visit
}

// newWrittenHalves remembers at most size visits; size 0 remembers none.
func newWrittenHalves(size int) *writtenHalves {
	if size <= 0 {
		return &writtenHalves{}
	}
	cache, err := simplelru.NewLRU[string, room.Period](size, nil)
	if err != nil {
		panic(err) // only for a size below 1, excluded above
	}
	return &writtenHalves{cache: cache}
}

// written records that the store acknowledged p's columns and returns
// p merged with the remembered half of its visit, and whether that row is
// complete: the row as stored holds at least that much. A complete visit
// is forgotten (nothing is left to complete), an open one remembered.
func (w *writtenHalves) written(p room.Period) (room.Period, bool) {
	if w.cache == nil {
		return p, p.Complete()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	known, _ := w.cache.Peek(p.Visit)
	merged := merge(known, p)
	if merged.Complete() {
		w.cache.Remove(p.Visit)
		return merged, true
	}
	w.cache.Add(p.Visit, merged)
	return merged, false
}

// Len returns the number of visits remembered.
func (w *writtenHalves) Len() int {
	if w.cache == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cache.Len()
}

// merge returns the row holding the columns of both a and b, b's where
// both have one (b is the later write).
func merge(a, b room.Period) room.Period {
	out := b
	if out.Start.IsZero() {
		out.Start = a.Start
	}
	if out.End.IsZero() {
		out.End = a.End
	}
	return out
}
