package txn_test

import (
	"testing"

	"github.com/squallstream/squall/txn"
)

func TestString(t *testing.T) {
	if got := txn.TxID(42).String(); got != "42" {
		t.Errorf("TxID(42).String() = %q", got)
	}
	if got := (txn.Attempt{TxID: 3, N: 1}).String(); got != "3:1" {
		t.Errorf("Attempt{3, 1}.String() = %q", got)
	}
}
