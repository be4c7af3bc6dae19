package ops

import "github.com/squallstream/squall/trident"

// Count counts tuples: every tuple is 1, whatever its values (nil
// included), Combine adds and Zero is 0. Use the zero value, Count{}.
type Count struct{}

var (
	_ trident.CombinerAggregator[int64] = Count{}
	_ trident.TupleCounter              = Count{}
)

// Init returns 1.
func (Count) Init(trident.Tuple) (int64, error) { return 1, nil }

// Combine returns a + b.
func (Count) Combine(a, b int64) int64 { return a + b }

// Zero returns 0.
func (Count) Zero() int64 { return 0 }

// BorrowsTuples returns true: Count keeps nothing of a tuple
// (trident.TupleBorrower).
func (Count) BorrowsTuples() bool { return true }

// CountsTuples returns true: Init is 1 for every tuple and Combine adds
// (trident.TupleCounter), so a persistent aggregation counts a batch's
// tuples itself.
func (Count) CountsTuples() bool { return true }
