package coord

import (
	"strconv"

	"github.com/squallstream/squall/state"
)

// Attempt names one attempt at a batch: its txid and attempt number. The
// first attempt at a txid has number 0; every re-run of the same txid has a
// higher number.
type Attempt struct {
	TxID state.TxID
	N    uint32
}

// String returns "txid:attempt", for example "3:1".
func (a Attempt) String() string {
	return a.TxID.String() + ":" + strconv.FormatUint(uint64(a.N), 10)
}

// Status is the phase of an active batch.
type Status uint8

const (
	// Processing: the batch was emitted and its processing has not been
	// acknowledged yet.
	Processing Status = iota + 1
	// Processed: the batch was processed and waits for its turn to commit.
	Processed
	// Committing: the batch's commit was announced and not acknowledged yet.
	Committing
)

// String names the status.
func (s Status) String() string {
	switch s {
	case Processing:
		return "processing"
	case Processed:
		return "processed"
	case Committing:
		return "committing"
	default:
		return "inactive"
	}
}
