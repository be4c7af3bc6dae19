package spout

import (
	"context"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// EndMarker is implemented by a Lister of a partitioned source whose
// partitions are logs read in order (Kafka's), so that a caller can wait
// until the topology has processed everything available at one moment
// (trident.Running.WaitCaughtUp, Spark's processAllAvailable).
//
// EndMark returns the mark of now: for every partition the source has,
// the position just past its last available record (for Kafka, the end
// offset). A partition with nothing to read at all (empty, or emptied by
// retention) may be left out. Positions are those that the source's
// metadata reports with Positioned.
type EndMarker interface {
	EndMark(ctx context.Context) (map[Partition]int64, error)
}

// Positioned is implemented by the metadata type of a source whose
// Lister is an EndMarker. End returns the position just past the batch's
// last record: where the partition's next batch starts (for Kafka,
// Meta.Next). A partition has reached a mark once the metadata of its
// last committed batch ends at or past the mark's position.
type Positioned interface {
	End() int64
}

// CommittedMeta returns the metadata of partition p's last batch
// committed at or before txid committed, read from the entries that the
// executors of stream (run by owner) stored with codec (nil means
// JSON[M]), and false if p has no such batch. Entries of later txids
// (frozen or fixed, not yet committed) are not seen. It writes nothing.
func CommittedMeta[M any](ctx context.Context, store coordstore.Store, owner coordstore.Fence, stream string, codec Codec[M], p Partition, committed txn.TxID) (M, bool, error) {
	if codec == nil {
		codec = JSON[M]{}
	}
	ms := metaStore[M]{store: store, stream: stream, fence: owner, codec: codec}
	m, _, ok, err := ms.before(ctx, p, committed, committed+1)
	return m, ok, err
}
