package state

import "github.com/squallstream/squall/txn"

// TxID is a batch's transaction id: an alias of txn.TxID, which documents
// it.
type TxID = txn.TxID
