package trident

import (
	"context"
	"fmt"
	"slices"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// FixedSource is a transactional source of fixed batches, for examples
// and tests: txid 1 emits batches[0], txid 2 batches[1], and so on, and
// every later txid an empty batch. Each batch is a list of tuples, each
// tuple one value per field. A replay emits exactly the same tuples, so
// any state fed by it is exactly-once. Its position is stored in the
// coordination store, so a topology resubmitted over a durable store
// carries on after the last committed batch.
//
// It has one partition, so one task emits; a tuple whose length differs
// from len(fields) stops the worker with an error.
func FixedSource(fields Fields, batches ...[][]any) Source {
	return TransactionalSource(fields,
		func() spout.Lister { return spout.ListerFunc(fixedPartitions) },
		func(int) spout.Emitter[FixedPosition] { return fixedEmitter{fields: len(fields), batches: batches} })
}

// FixedPosition is a FixedSource's metadata for one batch: it holds the
// fixed batches First up to (not including) Next.
type FixedPosition struct {
	First, Next int
}

const fixedPartition spout.Partition = "fixed"

func fixedPartitions(context.Context) ([]spout.Partition, error) {
	return []spout.Partition{fixedPartition}, nil
}

type fixedEmitter struct {
	fields  int
	batches [][][]any
}

func (e fixedEmitter) Emit(_ context.Context, _ txn.Attempt, _ spout.Partition, prev *FixedPosition, c spout.Collector) (FixedPosition, error) {
	pos := FixedPosition{}
	if prev != nil {
		pos.First = prev.Next
	}
	pos.Next = min(pos.First+1, len(e.batches))
	pos.First = min(pos.First, pos.Next)
	return pos, e.emit(pos, c)
}

func (e fixedEmitter) Reemit(_ context.Context, _ txn.Attempt, _ spout.Partition, pos FixedPosition, c spout.Collector) error {
	if pos.First < 0 || pos.Next > len(e.batches) || pos.First > pos.Next {
		return fmt.Errorf("trident: FixedSource: stored position %+v outside its %d batches", pos, len(e.batches))
	}
	return e.emit(pos, c)
}

func (e fixedEmitter) emit(pos FixedPosition, c spout.Collector) error {
	for _, b := range e.batches[pos.First:pos.Next] {
		for _, tuple := range b {
			if len(tuple) != e.fields {
				return fmt.Errorf("%w: FixedSource: tuple %v has %d values for %d fields", ErrInvalid, tuple, len(tuple), e.fields)
			}
			c.Emit(slices.Clone(tuple)...)
		}
	}
	return nil
}
