package spouttest

import (
	"slices"
	"sync"
)

// Collector is a spout.Collector that records what it receives, safe for
// concurrent use. The zero value is ready to use.
type Collector struct {
	mu     sync.Mutex
	tuples [][]any
	errs   []error

	// OnEmit, if set, is called for each tuple before it is recorded, for
	// example to check the store at the moment a tuple leaves the spout.
	OnEmit func(values []any)
}

// Emit implements spout.Collector.
func (c *Collector) Emit(values ...any) {
	if c.OnEmit != nil {
		c.OnEmit(values)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tuples = append(c.tuples, values)
}

// ReportError implements spout.Collector.
func (c *Collector) ReportError(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, err)
}

// Tuples returns the tuples emitted so far.
func (c *Collector) Tuples() [][]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tuples)
}

// Records returns the tuples emitted so far that are Source records, in
// order.
func (c *Collector) Records() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Record, 0, len(c.tuples))
	for _, t := range c.tuples {
		if r, ok := RecordOf(t); ok {
			out = append(out, r)
		}
	}
	return out
}

// Errors returns the errors reported so far.
func (c *Collector) Errors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errs)
}

// Reset forgets everything recorded.
func (c *Collector) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tuples, c.errs = nil, nil
}
