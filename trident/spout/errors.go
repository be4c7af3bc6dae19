package spout

import (
	"errors"
	"fmt"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/txn"
)

var (
	// ErrInvalidConfig is matched by the errors of constructors given an
	// invalid configuration.
	ErrInvalidConfig = errors.New("spout: invalid config")

	// ErrInvalidPartition is matched by the error of an invalid partition
	// name. A Lister returning one gets a fatal error.
	ErrInvalidPartition = errors.New("spout: invalid partition")

	// ErrInvalidBatch is matched by the error of an executor given a Batch
	// that no Allocator made: unsorted or invalid partitions. It is fatal.
	ErrInvalidBatch = errors.New("spout: invalid batch")

	// ErrUnavailable is for emitters: Reemit returns an error matching it
	// when the batch described by its metadata can no longer be produced
	// (its records were deleted). The executor turns it into a reported
	// *PartitionError.
	ErrUnavailable = errors.New("spout: batch no longer available")

	// ErrBadMetadata is matched by the errors of stored metadata that
	// cannot be decoded, or metadata that cannot be encoded. It is fatal:
	// unlike Storm, which read such metadata as "none" and silently
	// restarted the partition from its configured start (STORM-2675), an
	// operator must look at it.
	ErrBadMetadata = errors.New("spout: bad metadata")

	// ErrUnknownAttempt is matched by the error of BeginCommit for an
	// attempt that is not the one the executor or allocator last began
	// for its txid, or one whose emission failed. It is retryable: the
	// batch is replayed.
	ErrUnknownAttempt = errors.New("spout: unknown batch attempt")

	// ErrStale is matched by the error of EmitBatch for a txid that
	// already committed. It means the runtime broke its ordering contract
	// and is fatal.
	ErrStale = errors.New("spout: batch already committed")

	// ErrClosed is returned by the methods of a closed executor or
	// allocator.
	ErrClosed = errors.New("spout: closed")
)

// PartitionError is a failure to emit, re-emit, load or store the batch
// of one partition (Partition is empty for a failure of the whole task).
// It keeps the cause's failure kind (retryable, reported or fatal), except
// that a re-emit failing with ErrUnavailable is reported.
type PartitionError struct {
	Stream    string
	Partition Partition
	TxID      txn.TxID
	Op        string // what failed: "emit", "reemit", "load", "store", "clean up" or "refresh"
	Err       error
}

func (e *PartitionError) Error() string {
	if e.Partition == "" { // a failure of the task, such as "refresh"
		return fmt.Sprintf("spout: stream %q txid %d: %s: %v", e.Stream, e.TxID, e.Op, e.Err)
	}
	return fmt.Sprintf("spout: stream %q partition %s txid %d: %s: %v", e.Stream, e.Partition, e.TxID, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *PartitionError) Unwrap() error { return e.Err }

// unknownAttempt is the retryable error of a commit for an attempt that
// was not begun, or not last.
func unknownAttempt(stream string, a txn.Attempt) error {
	return failure.Retryable(fmt.Errorf("%w: stream %q attempt %s", ErrUnknownAttempt, stream, a))
}
