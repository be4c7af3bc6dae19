package spout

import (
	"fmt"

	"github.com/squallstream/squall/trident/coordstore"
)

// Kind is a spout flavour.
type Kind uint8

const (
	// NonTransactional: a Batcher; nothing is stored, replays may differ.
	NonTransactional Kind = iota + 1
	// Transactional: a partitioned spout whose batches are fixed at their
	// first emission; every replay is identical.
	Transactional
	// Opaque: a partitioned spout whose batches are fixed when they enter
	// their commit phase; a replay before that may differ.
	Opaque
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case NonTransactional:
		return "non-transactional"
	case Transactional:
		return "transactional"
	case Opaque:
		return "opaque"
	default:
		return fmt.Sprintf("kind(%d)", uint8(k))
	}
}

// AllocatorConfig configures an Allocator.
type AllocatorConfig struct {
	// Kind is the spout's flavour. Required.
	Kind Kind

	// Store keeps the partition list of each batch. Required for the
	// partitioned kinds, unused for NonTransactional.
	Store coordstore.Store

	// Stream is the stream's state id: stable across deployments, shared
	// with the executors. Required for the partitioned kinds.
	Stream string

	// Fence names the owner (the topology) whose metadata this is and the
	// generation that writes it: a write of a superseded generation fails
	// with an error matching coordstore.ErrFenced. Required for the
	// partitioned kinds.
	Fence coordstore.Fence

	// Partitions lists the source's partitions. Required for the
	// partitioned kinds, unused for NonTransactional.
	Partitions Lister
}

// Validate reports a configuration an Allocator cannot run with. The
// error matches ErrInvalidConfig.
func (c AllocatorConfig) Validate() error {
	switch c.Kind {
	case NonTransactional:
		return nil
	case Transactional, Opaque:
	default:
		return fmt.Errorf("%w: unknown Kind %d", ErrInvalidConfig, uint8(c.Kind))
	}
	if c.Store == nil {
		return fmt.Errorf("%w: nil Store for a %s spout", ErrInvalidConfig, c.Kind)
	}
	if err := coordstore.ValidateStream(c.Stream); err != nil {
		return fmt.Errorf("%w: Stream: %w", ErrInvalidConfig, err)
	}
	if err := coordstore.ValidateFence(c.Fence); err != nil {
		return fmt.Errorf("%w: Fence: %w", ErrInvalidConfig, err)
	}
	if c.Partitions == nil {
		return fmt.Errorf("%w: nil Partitions for a %s spout", ErrInvalidConfig, c.Kind)
	}
	return nil
}

// ExecutorConfig configures one task's executor of a partitioned spout
// (NewTransactional, NewOpaque).
type ExecutorConfig[M any] struct {
	// Store keeps each partition's metadata by txid. Required.
	Store coordstore.Store

	// Stream is the stream's state id, the one its Allocator uses.
	// Required.
	Stream string

	// Fence is the owner and generation, the Allocator's. Required.
	Fence coordstore.Fence

	// Task is this executor's index among the spout's tasks, from 0 to
	// NumTasks-1.
	Task int

	// NumTasks is the number of the spout's tasks. Zero means 1.
	NumTasks int

	// Emitter emits this task's batches. Required. Give each task its own.
	Emitter Emitter[M]

	// Codec stores metadata. Nil means JSON[M].
	Codec Codec[M]
}

// Validate reports a configuration an executor cannot run with. The error
// matches ErrInvalidConfig.
func (c ExecutorConfig[M]) Validate() error {
	switch {
	case c.Store == nil:
		return fmt.Errorf("%w: nil Store", ErrInvalidConfig)
	case c.Emitter == nil:
		return fmt.Errorf("%w: nil Emitter", ErrInvalidConfig)
	case c.NumTasks < 0:
		return fmt.Errorf("%w: negative NumTasks %d", ErrInvalidConfig, c.NumTasks)
	case c.Task < 0 || c.Task >= c.numTasks():
		return fmt.Errorf("%w: Task %d outside [0, %d)", ErrInvalidConfig, c.Task, c.numTasks())
	}
	if err := coordstore.ValidateStream(c.Stream); err != nil {
		return fmt.Errorf("%w: Stream: %w", ErrInvalidConfig, err)
	}
	if err := coordstore.ValidateFence(c.Fence); err != nil {
		return fmt.Errorf("%w: Fence: %w", ErrInvalidConfig, err)
	}
	return nil
}

func (c ExecutorConfig[M]) numTasks() int {
	if c.NumTasks == 0 {
		return 1
	}
	return c.NumTasks
}

func (c ExecutorConfig[M]) codec() Codec[M] {
	if c.Codec == nil {
		return JSON[M]{}
	}
	return c.Codec
}

// BatchConfig configures a BatchExecutor.
type BatchConfig struct {
	// Spout is this task's batch spout. Required.
	Spout Batcher
}

// Validate reports a configuration a BatchExecutor cannot run with. The
// error matches ErrInvalidConfig.
func (c BatchConfig) Validate() error {
	if c.Spout == nil {
		return fmt.Errorf("%w: nil Spout", ErrInvalidConfig)
	}
	return nil
}
