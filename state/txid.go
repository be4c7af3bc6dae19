package state

import "strconv"

// TxID is a batch's transaction id. The first batch of a stream has TxID 1
// and every later batch has the previous TxID plus one. State commits happen
// strictly in TxID order. The zero TxID means "no transaction" (for example a
// state query outside a commit).
type TxID uint64

// String returns the decimal form of the id.
func (t TxID) String() string { return strconv.FormatUint(uint64(t), 10) }
