// Package txn names Trident's transactions: the transaction id (TxID) a
// batch carries and one attempt at it (Attempt).
//
// It is a leaf package (it imports nothing of squall), so that state,
// spouts, the batch coordinator and the trident stream API all speak of
// the same two types; state.TxID, trident.TxID, trident.Attempt and
// spout.Attempt are aliases of these.
package txn

import "strconv"

// TxID is a batch's transaction id. The first batch of a stream has TxID 1
// and every later batch has the previous TxID plus one. State commits
// happen strictly in TxID order. The zero TxID means "no transaction" (for
// example a state query outside a commit, or "nothing committed yet").
type TxID uint64

// String returns the decimal form of the id.
func (t TxID) String() string { return strconv.FormatUint(uint64(t), 10) }

// Attempt names one attempt at a batch: its txid and attempt number. The
// first attempt at a txid has number 0; a txid emitted again (a replay
// after a failure) always has a higher number. Every tuple of a batch
// carries its Attempt, and state is written with its TxID.
type Attempt struct {
	// TxID is the batch's transaction id.
	TxID TxID
	// N is the attempt number: 0 for the first attempt at TxID.
	N uint32
}

// String returns "txid:attempt", for example "3:1".
func (a Attempt) String() string {
	return a.TxID.String() + ":" + strconv.FormatUint(uint64(a.N), 10)
}
