package coord

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
