package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/coordstore"
)

// ErrSuperseded is matched by the error of a write fenced by a newer
// owner of the topology: state.ErrFenced.
var ErrSuperseded = state.ErrFenced

// Acquire makes this submission the owner of the topology. A retryable
// failure (the store is unreachable) is tried again, with backoff on clk
// (nil means the system clock), until ctx is done; an Acquire that failed
// after taking effect only skips a generation.
func Acquire(ctx context.Context, store coordstore.Store, clk clock.Clock, topology string) (coordstore.Fence, error) {
	clk = clock.Or(clk)
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
		t := clk.NewTimer(time.Duration(waits.Next()))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
		}
	}
}

// AddFencingRejection counts a write rejected because a newer owner
// generation of the topology had written.
func (s *Status) AddFencingRejection() { s.fenced.Add(1) }

// FencingRejections returns the number of writes rejected for a newer
// owner generation.
func (s *Status) FencingRejections() uint64 { return s.fenced.Load() }

// Superseded is the error that halts a topology whose write was fenced.
func Superseded(owner coordstore.Fence, err error) error {
	return fmt.Errorf("trident: topology %q: generation %v was superseded by a newer owner, so this process stops for good: %w",
		owner.Owner, owner.Generation, err)
}
