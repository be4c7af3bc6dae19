package trident

import "github.com/squallstream/squall/txn"

// Attempt is one attempt at a batch: an alias of txn.Attempt, which
// documents it. Field 0 of every data tuple is the batch's Attempt.
type Attempt = txn.Attempt

// TxID is a batch's transaction id: an alias of txn.TxID, which documents
// it.
type TxID = txn.TxID
