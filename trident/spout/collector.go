package spout

// Collector receives the tuples a spout emits for a batch, or an operation
// emits (trident.Collector is this interface). The runtime provides it; it
// tags every tuple with the batch and counts them.
type Collector interface {
	// Emit emits one tuple. The collector may keep values; the caller must
	// not modify them afterwards.
	Emit(values ...any)
	// ReportError shows err to operators without failing the batch.
	ReportError(err error)
}

// buffer is a Collector that holds tuples until flush, so that a
// transactional batch's metadata is stored before any of its tuples
// leave the executor. Reported errors go through at once.
type buffer struct {
	out    Collector
	tuples [][]any
}

func (b *buffer) Emit(values ...any)    { b.tuples = append(b.tuples, values) }
func (b *buffer) ReportError(err error) { b.out.ReportError(err) }

// flush emits the held tuples to the real collector and empties b.
func (b *buffer) flush() {
	for i, t := range b.tuples {
		b.out.Emit(t...)
		b.tuples[i] = nil
	}
	b.tuples = b.tuples[:0]
}

// drop forgets the held tuples.
func (b *buffer) drop() {
	clear(b.tuples)
	b.tuples = b.tuples[:0]
}
