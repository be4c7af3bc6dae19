package coord

import "github.com/squallstream/squall/internal/backoff"

// Backoff computes the coordinator's retry delays in ticks; it is the
// project's one backoff helper (internal/backoff).
type Backoff = backoff.Backoff

// NewBackoff returns a Backoff from base to max ticks whose jitter is drawn
// from a PCG seeded with seed.
func NewBackoff(base, max int64, seed uint64) Backoff { return backoff.New(base, max, seed) }
