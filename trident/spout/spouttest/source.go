package spouttest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Offsets is the metadata of one batch of a Source partition: the records
// at offsets First up to, not including, Next. An empty batch has First ==
// Next and keeps the position.
type Offsets struct {
	First int64
	Next  int64
}

// Len returns the number of records in the batch.
func (o Offsets) Len() int64 { return o.Next - o.First }

// Record is one record of a Source.
type Record struct {
	Partition spout.Partition
	Offset    int64
	Value     string
}

// Tuple returns the tuple an Emitter emits for r: partition, offset,
// value.
func (r Record) Tuple() []any { return []any{string(r.Partition), r.Offset, r.Value} }

// RecordOf returns the record of a tuple made by Tuple, and false if the
// tuple has another shape.
func RecordOf(values []any) (Record, bool) {
	if len(values) != 3 {
		return Record{}, false
	}
	p, ok1 := values[0].(string)
	o, ok2 := values[1].(int64)
	v, ok3 := values[2].(string)
	return Record{Partition: spout.Partition(p), Offset: o, Value: v}, ok1 && ok2 && ok3
}

// Call describes one call of an Emitter, for Source.SetFault and
// Source.Calls.
type Call struct {
	Op        string // "emit", "reemit" or "refresh"
	Attempt   txn.Attempt
	Partition spout.Partition // empty for "refresh"
	Prev      *Offsets        // "emit": the previous batch, nil if none
	Meta      Offsets         // "reemit": the batch; "emit": the result
}

// Source is an in-memory partitioned log, safe for concurrent use. It is a
// spout.Lister, and Emitter returns emitters over it.
type Source struct {
	mu       sync.Mutex
	parts    map[spout.Partition]*plog
	maxBatch int
	limit    func(txn.Attempt, spout.Partition) int
	fault    func(Call) error
	calls    []Call
	reset    int64
}

// plog is one partition: records from offset base on.
type plog struct {
	base int64
	recs []string
}

func (l *plog) end() int64 { return l.base + int64(len(l.recs)) }

// NewSource returns a source with the given empty partitions. Batches hold
// every available record until SetMaxBatch or SetLimit says otherwise.
func NewSource(partitions ...spout.Partition) *Source {
	s := &Source{parts: map[spout.Partition]*plog{}}
	for _, p := range partitions {
		s.parts[p] = &plog{}
	}
	return s
}

// AddPartition adds an empty partition; adding an existing one does
// nothing.
func (s *Source) AddPartition(p spout.Partition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.parts[p]; !ok {
		s.parts[p] = &plog{}
	}
}

// RemovePartition removes p and its records from the listing and from
// reads.
func (s *Source) RemovePartition(p spout.Partition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.parts, p)
}

// Append appends values to p (creating it if needed) and returns the
// offset of the first one.
func (s *Source) Append(p spout.Partition, values ...string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.parts[p]
	if !ok {
		l = &plog{}
		s.parts[p] = l
	}
	first := l.end()
	l.recs = append(l.recs, values...)
	return first
}

// Truncate deletes the records of p below offset before, as retention
// does. Offsets do not change.
func (s *Source) Truncate(p spout.Partition, before int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.parts[p]
	if !ok || before <= l.base {
		return
	}
	n := min(before-l.base, int64(len(l.recs)))
	l.recs = slices.Clone(l.recs[n:])
	l.base += n
}

// Records returns the records p still holds, in offset order.
func (s *Source) Records(p spout.Partition) []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.parts[p]
	if !ok {
		return nil
	}
	out := make([]Record, len(l.recs))
	for i, v := range l.recs {
		out[i] = Record{Partition: p, Offset: l.base + int64(i), Value: v}
	}
	return out
}

// End returns the offset the next record appended to p will get.
func (s *Source) End(p spout.Partition) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.parts[p]; ok {
		return l.end()
	}
	return 0
}

// SetMaxBatch bounds the records of a new batch of one partition; zero
// means no bound.
func (s *Source) SetMaxBatch(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxBatch = n
}

// SetLimit sets a function choosing the bound of each new batch (zero: no
// bound), overriding SetMaxBatch; nil removes it. For example
// func(a, p) int { return 1 + int(a.N) } makes every replay read more.
func (s *Source) SetLimit(f func(txn.Attempt, spout.Partition) int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = f
}

// SetFault sets a function that may fail emitter calls: a non-nil error
// is returned by the call before it emits anything. Nil removes it.
func (s *Source) SetFault(f func(Call) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault = f
}

// Calls returns the emitter calls so far.
func (s *Source) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Reset returns the number of records new batches skipped because
// retention had deleted them (an opaque source resets to the oldest
// record it still has, like Kafka's auto.offset.reset=earliest).
func (s *Source) Reset() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reset
}

// Partitions implements spout.Lister: the source's partitions, sorted.
func (s *Source) Partitions(ctx context.Context) ([]spout.Partition, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.parts)), nil
}

// Lister returns s as a spout.Lister, for the newLister argument of the
// partitioned sources (trident.OpaqueSource(fields, src.Lister, ...)). The
// source is shared by every worker start; it has nothing to close.
func (s *Source) Lister() spout.Lister { return s }

// Emitter returns a new emitter over s; give each spout task its own.
func (s *Source) Emitter() *Emitter { return &Emitter{src: s} }

// Emitter is a spout.Emitter[Offsets] over a Source. Emitted tuples are
// Record.Tuple values.
type Emitter struct {
	src    *Source
	owned  []spout.Partition
	closed bool
}

var (
	_ spout.Emitter[Offsets] = (*Emitter)(nil)
	_ spout.Refresher        = (*Emitter)(nil)
)

// call checks the emitter and the fault hook; the caller holds s.mu.
func (e *Emitter) call(ctx context.Context, c Call) error {
	if e.closed {
		return spout.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.src.fault != nil {
		if err := e.src.fault(c); err != nil {
			return err
		}
	}
	return nil
}

// Emit implements spout.Emitter: the records after prev (from the oldest
// retained record without prev, or if retention deleted prev's end), up
// to the batch bound.
func (e *Emitter) Emit(ctx context.Context, a txn.Attempt, p spout.Partition, prev *Offsets, c spout.Collector) (Offsets, error) {
	s := e.src
	s.mu.Lock()
	defer s.mu.Unlock()
	call := Call{Op: "emit", Attempt: a, Partition: p, Prev: prev}
	if err := e.call(ctx, call); err != nil {
		return Offsets{}, err
	}
	l, ok := s.parts[p]
	if !ok {
		return Offsets{}, fmt.Errorf("spouttest: no partition %s", p)
	}
	start := l.base
	if prev != nil {
		start = prev.Next
	}
	if start > l.end() {
		return Offsets{}, fmt.Errorf("spouttest: partition %s: offset %d is past the end %d", p, start, l.end())
	}
	if start < l.base {
		s.reset += l.base - start
		start = l.base
	}
	n := l.end() - start
	bound := s.maxBatch
	if s.limit != nil {
		bound = s.limit(a, p)
	}
	if bound > 0 {
		n = min(n, int64(bound))
	}
	m := Offsets{First: start, Next: start + n}
	for o := m.First; o < m.Next; o++ {
		c.Emit(Record{Partition: p, Offset: o, Value: l.recs[o-l.base]}.Tuple()...)
	}
	call.Meta = m
	s.calls = append(s.calls, call)
	return m, nil
}

// Reemit implements spout.Emitter: exactly the records of m, or an error
// matching spout.ErrUnavailable if some of them are gone.
func (e *Emitter) Reemit(ctx context.Context, a txn.Attempt, p spout.Partition, m Offsets, c spout.Collector) error {
	s := e.src
	s.mu.Lock()
	defer s.mu.Unlock()
	call := Call{Op: "reemit", Attempt: a, Partition: p, Meta: m}
	if err := e.call(ctx, call); err != nil {
		return err
	}
	l, ok := s.parts[p]
	if !ok {
		return fmt.Errorf("%w: partition %s no longer exists", spout.ErrUnavailable, p)
	}
	if m.First > m.Next {
		return fmt.Errorf("spouttest: partition %s: invalid batch [%d, %d)", p, m.First, m.Next)
	}
	if m.First < l.base || m.Next > l.end() {
		return fmt.Errorf("%w: partition %s holds [%d, %d), batch is [%d, %d)", spout.ErrUnavailable, p, l.base, l.end(), m.First, m.Next)
	}
	for o := m.First; o < m.Next; o++ {
		c.Emit(Record{Partition: p, Offset: o, Value: l.recs[o-l.base]}.Tuple()...)
	}
	s.calls = append(s.calls, call)
	return nil
}

// Refresh implements spout.Refresher; Owned returns what it was given.
func (e *Emitter) Refresh(ctx context.Context, owned []spout.Partition) error {
	s := e.src
	s.mu.Lock()
	defer s.mu.Unlock()
	call := Call{Op: "refresh"}
	if err := e.call(ctx, call); err != nil {
		return err
	}
	e.owned = slices.Clone(owned)
	s.calls = append(s.calls, call)
	return nil
}

// Owned returns the partitions of the last Refresh.
func (e *Emitter) Owned() []spout.Partition {
	e.src.mu.Lock()
	defer e.src.mu.Unlock()
	return slices.Clone(e.owned)
}

// Close implements io.Closer; later calls fail with spout.ErrClosed.
func (e *Emitter) Close() error {
	e.src.mu.Lock()
	defer e.src.mu.Unlock()
	e.closed = true
	return nil
}

// Closed reports whether Close was called.
func (e *Emitter) Closed() bool {
	e.src.mu.Lock()
	defer e.src.mu.Unlock()
	return e.closed
}
