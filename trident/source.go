package trident

import (
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
)

// Source describes where a stream's batches come from. Build one with
// BatchSource, TransactionalSource or OpaqueSource.
type Source struct {
	id          string
	fields      Fields
	parallelism int
	coordinator func(store coordstore.Store, owner coordstore.Fence, stream string) (*spout.Coordinator, error)
	executor    func(store coordstore.Store, owner coordstore.Fence, stream string, task, numTasks int) (spout.Executor, error)
}

// Parallelism sets the number of spout tasks (default 1). Partitioned
// sources split their partitions among the tasks.
func (s Source) Parallelism(n int) Source { s.parallelism = n; return s }

// BatchSource reads batches from a non-transactional batch spout, one per
// task. State fed by it is exactly-once only if the spout re-emits the same
// tuples when a txid is replayed.
func BatchSource(fields Fields, newSpout func() spout.Batcher) Source {
	return Source{fields: fields, parallelism: 1,
		coordinator: func(coordstore.Store, coordstore.Fence, string) (*spout.Coordinator, error) {
			return spout.NewCoordinator(spout.CoordinatorConfig{Kind: spout.NonTransactional})
		},
		executor: func(coordstore.Store, coordstore.Fence, string, int, int) (spout.Executor, error) {
			return spout.NewBatchExecutor(spout.BatchConfig{Spout: newSpout()})
		},
	}
}

// TransactionalSource reads a partitioned source whose batches are fixed
// at their first emission: a replay emits exactly the same tuples.
// newEmitter is called once per task.
func TransactionalSource[M any](fields Fields, partitions spout.Lister, newEmitter func(task int) spout.Emitter[M]) Source {
	return partitioned(fields, spout.Transactional, partitions, func(cfg spout.ExecutorConfig[M]) (spout.Executor, error) {
		cfg.Emitter = newEmitter(cfg.Task)
		return spout.NewTransactional(cfg)
	})
}

// OpaqueSource reads a partitioned source whose replays may differ until a
// batch enters its commit phase; from then on the batch is frozen. Every
// tuple lands in exactly one committed batch. newEmitter is called once per
// task.
func OpaqueSource[M any](fields Fields, partitions spout.Lister, newEmitter func(task int) spout.Emitter[M]) Source {
	return partitioned(fields, spout.Opaque, partitions, func(cfg spout.ExecutorConfig[M]) (spout.Executor, error) {
		cfg.Emitter = newEmitter(cfg.Task)
		return spout.NewOpaque(cfg)
	})
}

func partitioned[M any](fields Fields, kind spout.Kind, partitions spout.Lister,
	newExecutor func(spout.ExecutorConfig[M]) (spout.Executor, error)) Source {
	return Source{fields: fields, parallelism: 1,
		coordinator: func(store coordstore.Store, owner coordstore.Fence, stream string) (*spout.Coordinator, error) {
			return spout.NewCoordinator(spout.CoordinatorConfig{Kind: kind, Store: store, Stream: stream, Fence: owner, Partitions: partitions})
		},
		executor: func(store coordstore.Store, owner coordstore.Fence, stream string, task, numTasks int) (spout.Executor, error) {
			return newExecutor(spout.ExecutorConfig[M]{Store: store, Stream: stream, Fence: owner, Task: task, NumTasks: numTasks})
		},
	}
}
