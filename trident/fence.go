package trident

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/coordstore"
)

// ErrSuperseded is matched by Running.Err once another process took the
// topology over (it submitted the same topology over the same store,
// acquiring a newer owner generation): every coordinator write, spout
// metadata write and state write of this process is then rejected, so it
// stops for good. It is never retried: only the newest owner commits.
var ErrSuperseded = state.ErrFenced

// acquire makes this submission the owner of the topology. A retryable
// failure (the store is unreachable) is tried again, with backoff, until
// ctx is done; an Acquire that failed after taking effect only skips a
// generation.
func acquire(ctx context.Context, store coordstore.Store, topology string) (coordstore.Fence, error) {
	waits := backoff.Sequence{Backoff: backoff.Exponential(int64(10*time.Millisecond), int64(time.Second))}
	for {
		gen, err := store.Acquire(ctx, topology)
		if err == nil {
			return coordstore.Fence{Owner: topology, Generation: gen}, nil
		}
		if !failure.IsRetryable(err) || ctx.Err() != nil {
			if ctx.Err() != nil {
				err = errors.Join(err, ctx.Err())
			}
			return coordstore.Fence{}, fmt.Errorf("trident: taking ownership of topology %q: %w", topology, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(waits.Next())):
		}
	}
}

// superseded is the error that halts a topology whose write was fenced.
func superseded(owner coordstore.Fence, err error) error {
	return fmt.Errorf("trident: topology %q: generation %v was superseded by a newer owner, so this process stops for good: %w",
		owner.Owner, owner.Generation, err)
}
