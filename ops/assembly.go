package ops

import "github.com/squallstream/squall/trident"

// FirstNOf returns the stream of the n tuples of each batch of s with the
// smallest values of sortField (the largest with descending), best first,
// with s's fields: Storm's FirstN assembly (FirstN on every partition,
// then on one). See FirstN for how values rank.
func FirstNOf[V Ordered](s *trident.Stream, n int, sortField string, descending bool) *trident.Stream {
	fields := s.Fields()
	partial := trident.PartitionAggregate(s, fields, FirstN[V](n, sortField, descending), fields...)
	return trident.PartitionAggregate(partial.Global(), fields, FirstN[V](n, sortField, descending), fields...)
}

// LowestOf returns the stream of the tuple of each batch of s with the
// smallest value of field (Storm's minBy).
func LowestOf[V Ordered](s *trident.Stream, field string) *trident.Stream {
	return FirstNOf[V](s, 1, field, false)
}

// HighestOf returns the stream of the tuple of each batch of s with the
// largest value of field (Storm's maxBy).
func HighestOf[V Ordered](s *trident.Stream, field string) *trident.Stream {
	return FirstNOf[V](s, 1, field, true)
}
