package spout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/squallstream/squall/txn"
)

// Partition identifies one partition of a partitioned source, such as
// "clicks@3" for partition 3 of the Kafka topic clicks. It names the
// partition's metadata in the coordination store, so it must stay the same
// across deployments. Names are 1 to 1024 bytes and do not start with '$',
// which is reserved for the allocator's own entries.
type Partition string

// String returns the partition id.
func (p Partition) String() string { return string(p) }

// maxPartition bounds partition names (the coordination store's limit).
const maxPartition = 1024

// Validate returns an error matching ErrInvalidPartition if p cannot name a
// partition.
func (p Partition) Validate() error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty name", ErrInvalidPartition)
	case len(p) > maxPartition:
		return fmt.Errorf("%w: name of %d bytes (at most %d)", ErrInvalidPartition, len(p), maxPartition)
	case strings.HasPrefix(string(p), "$"):
		return fmt.Errorf("%w: %q starts with '$', which is reserved", ErrInvalidPartition, p)
	}
	return nil
}

// Batch is what the allocator decided about one batch attempt; the
// runtime hands the same Batch to every task's executor.
type Batch struct {
	// Attempt is the batch attempt to emit.
	Attempt txn.Attempt

	// Partitions are all of the stream's partitions in this batch, sorted
	// and distinct (nil for a non-transactional spout). Each task emits
	// its share, chosen by Assign.
	Partitions []Partition

	// Frozen says that the partition set is stored and that a partition
	// whose metadata for the txid is stored must be re-emitted exactly
	// from it. A transactional batch is always frozen (its set is stored
	// by Begin); an opaque batch is frozen once an attempt at its txid has
	// entered the commit phase.
	Frozen bool

	// Committed is the last txid that had committed when the batch was
	// announced: the runtime sets it from the batch coordinator. An
	// executor takes its view of what committed from it rather than from
	// the first batch it sees, so an executor that starts while batches
	// are in flight, or that never got the announcement of an earlier
	// batch, does not take those batches for committed.
	Committed txn.TxID
}

// Assign returns the partitions of all (sorted and distinct) that task
// emits when numTasks tasks share them: every numTasks-th partition,
// starting at index task (Storm's getPartitionsForTask), in a new slice.
func Assign(all []Partition, task, numTasks int) []Partition {
	if numTasks <= 0 || task < 0 || task >= numTasks {
		return nil
	}
	var mine []Partition
	for i := task; i < len(all); i += numTasks {
		mine = append(mine, all[i])
	}
	return mine
}

// owner returns the task that owns p in all, and whether p is in all.
func owner(all []Partition, p Partition, numTasks int) (int, bool) {
	i, ok := slices.BinarySearch(all, p)
	if !ok {
		return 0, false
	}
	return i % numTasks, true
}

// normalize validates ps and returns them sorted and distinct, in a new
// slice.
func normalize(ps []Partition) ([]Partition, error) {
	out := slices.Clone(ps)
	for _, p := range out {
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// checkSorted returns an error matching ErrInvalidBatch unless ps is
// sorted, distinct and valid: a Batch must come from an Allocator.
func checkSorted(ps []Partition) error {
	for i, p := range ps {
		if err := p.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidBatch, err)
		}
		if i > 0 && ps[i-1] >= p {
			return fmt.Errorf("%w: partitions not sorted and distinct at %q", ErrInvalidBatch, p)
		}
	}
	return nil
}
