package txn_test

import (
	"fmt"

	"github.com/squallstream/squall/txn"
)

func ExampleAttempt() {
	first := txn.Attempt{TxID: 7}
	replay := txn.Attempt{TxID: first.TxID, N: first.N + 1}
	fmt.Println(first, replay)
	// Output: 7:0 7:1
}
