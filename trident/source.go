package trident

import (
	"errors"
	"fmt"
	"io"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
)

// Source describes where a stream's batches come from. Build one with
// BatchSource, TransactionalSource or OpaqueSource.
type Source struct {
	id          string
	fields      Fields
	parallelism int
	allocator   func(store coordstore.Store, owner coordstore.Fence, stream string) (*spout.Allocator, error)
	executor    func(store coordstore.Store, owner coordstore.Fence, stream string, task, numTasks int) (spout.Executor, error)
	waiting     func() bool // nil, or whether data waits for a batch (see Config.IdleBatchInterval)
	endMarks    *endMarks   // nil, or where the source ends (see Running.WaitCaughtUp)
}

// Parallelism sets the number of spout tasks (default 1). Partitioned
// sources split their partitions among the tasks.
func (s Source) Parallelism(n int) Source { s.parallelism = n; return s }

// BatchSource reads batches from a non-transactional batch spout, one per
// task. State fed by it is exactly-once only if the spout re-emits the same
// tuples when a txid is replayed.
func BatchSource(fields Fields, newSpout func() spout.Batcher) Source {
	return Source{fields: fields, parallelism: 1,
		allocator: func(coordstore.Store, coordstore.Fence, string) (*spout.Allocator, error) {
			return spout.NewAllocator(spout.AllocatorConfig{Kind: spout.NonTransactional})
		},
		executor: func(coordstore.Store, coordstore.Fence, string, int, int) (spout.Executor, error) {
			return spout.NewBatchExecutor(spout.BatchConfig{Spout: newSpout()})
		},
	}
}

// TransactionalSource reads a partitioned source whose batches are fixed
// at their first emission: a replay emits exactly the same tuples.
//
// The runtime opens both halves with the worker that runs them and closes
// them when it stops: newLister is called once per worker start for the
// stream's allocator (and once per Running.WaitCaughtUp call), newEmitter once per task, and each result that
// implements io.Closer is closed when that worker stops (a crash
// included). A restarted worker gets new ones, so return a new value on
// every call if it holds resources; a Lister shared on purpose (one per
// process, closed by its owner after the topology stopped) must not
// implement io.Closer.
//
// Options change how the executors run, for example MetaCodec.
func TransactionalSource[M any](fields Fields, newLister func() spout.Lister, newEmitter func(task int) spout.Emitter[M], opts ...SourceOption[M]) Source {
	return partitioned(endMarksOf(newLister, opts), fields, spout.Transactional, newLister, func(cfg spout.ExecutorConfig[M]) (spout.Executor, error) {
		cfg.Emitter = newEmitter(cfg.Task)
		applySourceOptions(&cfg, opts)
		return spout.NewTransactional(cfg)
	})
}

// OpaqueSource reads a partitioned source whose replays may differ until a
// batch enters its commit phase; from then on the batch is frozen. Every
// tuple lands in exactly one committed batch. newLister and newEmitter are
// called and their results closed, and opts apply, as for
// TransactionalSource.
func OpaqueSource[M any](fields Fields, newLister func() spout.Lister, newEmitter func(task int) spout.Emitter[M], opts ...SourceOption[M]) Source {
	return partitioned(endMarksOf(newLister, opts), fields, spout.Opaque, newLister, func(cfg spout.ExecutorConfig[M]) (spout.Executor, error) {
		cfg.Emitter = newEmitter(cfg.Task)
		applySourceOptions(&cfg, opts)
		return spout.NewOpaque(cfg)
	})
}

func partitioned[M any](marks *endMarks, fields Fields, kind spout.Kind, newLister func() spout.Lister,
	newExecutor func(spout.ExecutorConfig[M]) (spout.Executor, error)) Source {
	return Source{fields: fields, parallelism: 1, endMarks: marks,
		allocator: func(store coordstore.Store, owner coordstore.Fence, stream string) (*spout.Allocator, error) {
			if newLister == nil {
				return nil, fmt.Errorf("%w: stream %q: no Lister constructor", spout.ErrInvalidConfig, stream)
			}
			l := newLister()
			if l == nil {
				return nil, fmt.Errorf("%w: stream %q: the Lister constructor returned nil", spout.ErrInvalidConfig, stream)
			}
			c, err := spout.NewAllocator(spout.AllocatorConfig{Kind: kind, Store: store, Stream: stream, Fence: owner, Partitions: l})
			if err != nil {
				if cl, ok := l.(io.Closer); ok {
					err = errors.Join(err, cl.Close())
				}
				return nil, err
			}
			return c, nil
		},
		executor: func(store coordstore.Store, owner coordstore.Fence, stream string, task, numTasks int) (spout.Executor, error) {
			return newExecutor(spout.ExecutorConfig[M]{Store: store, Stream: stream, Fence: owner, Task: task, NumTasks: numTasks})
		},
	}
}

// SourceOption configures the executors of a partitioned source
// (TransactionalSource, OpaqueSource) with metadata of type M.
type SourceOption[M any] func(*spout.ExecutorConfig[M])

// MetaCodec stores the source's per-partition metadata with c instead of
// the default spout.JSON. Changing the codec of a deployed source needs a
// codec that still decodes what the old one stored.
func MetaCodec[M any](c spout.Codec[M]) SourceOption[M] {
	return func(cfg *spout.ExecutorConfig[M]) { cfg.Codec = c }
}

func applySourceOptions[M any](cfg *spout.ExecutorConfig[M], opts []SourceOption[M]) {
	for _, o := range opts {
		if o != nil {
			o(cfg)
		}
	}
}
