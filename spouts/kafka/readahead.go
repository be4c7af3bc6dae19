package kafka

import (
	"context"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/trident/spout"
)

// Read-ahead: when a partition's batch stopped at a cap with more records
// in the log, the emitter fetches the partition's next records in the
// background while the batch is processed, so that the next batch's Emit
// finds them ready. The fetch is a plain Client.Fetch from the offset
// where the batch ended; it is used only if the next batch starts exactly
// there (the usual case), and dropped otherwise (a replay, a moved
// partition), so it never changes what a batch holds, only when its bytes
// arrive. At most one fetch per owned partition is ahead, of at most
// min(2*MaxBytesPerPartition+64 KiB, 4 MiB).

// ahead is one background fetch.
type ahead struct {
	start int64
	done  chan struct{}
	resp  *kafkago.FetchResponse
	err   error
}

// readAhead starts fetching p from offset start, unless the spout is
// closing.
func (e *emitter) readAhead(p spout.Partition, tp topicPartition, start int64) {
	if !e.s.goroutines.start() {
		return
	}
	a := &ahead{start: start, done: make(chan struct{})}
	e.ahead[p] = a
	maxBytes := fetchBytes(e.s.cfg.MaxBytesPerPartition)
	go func() {
		defer e.s.goroutines.done()
		defer close(a.done)
		ctx, cancel := context.WithTimeout(e.s.goroutines.ctx, e.s.cfg.RequestTimeout)
		defer cancel()
		a.resp, a.err = e.s.client.Fetch(ctx, &kafkago.FetchRequest{
			Topic: tp.topic, Partition: tp.partition, Offset: start, MinBytes: 0, MaxBytes: maxBytes,
		})
		if a.err == nil && a.resp.Error != nil {
			a.err = a.resp.Error
		}
	}()
}

// takeAhead returns the read-ahead response of p if it starts at start
// and succeeded, waiting for it if it is still under way, and forgets it
// either way. A failed read-ahead is ignored: the batch fetches again and
// handles the error itself.
func (e *emitter) takeAhead(ctx context.Context, p spout.Partition, start int64) *kafkago.FetchResponse {
	a, ok := e.ahead[p]
	if !ok {
		return nil
	}
	delete(e.ahead, p)
	if a.start != start {
		return nil
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		return nil
	}
	if a.err != nil {
		return nil
	}
	return a.resp
}
