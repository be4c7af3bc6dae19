package acker

import (
	"errors"
	"fmt"
)

// DefaultTimeoutBuckets is the number of timeout buckets used when
// Config.TimeoutBuckets is zero: a tree times out between T and 2T for a
// tick period T, like the spout-side RotatingMap in Storm.
const DefaultTimeoutBuckets = 2

// MaxTimeoutBuckets is the largest valid Config.TimeoutBuckets.
const MaxTimeoutBuckets = 1 << bucketBits

// MaxPending is the largest number of trees a Tracker can hold at once
// (about 67 million, some 2 GiB of table). The limit comes from the 26-bit
// entry numbers in the table's index. More panics.
const MaxPending = 1<<indexBits - 1

// ErrConfig is wrapped by every error that Config.Validate returns.
var ErrConfig = errors.New("acker: invalid config")

// Config configures a Tracker. The zero value is valid and gives the
// documented defaults.
type Config struct {
	// TimeoutBuckets is the number of rotating timeout buckets; a pending
	// tree expires after TimeoutBuckets-1 to TimeoutBuckets ticks. Zero
	// means 2 (a tree times out between T and 2T for a tick period T, like
	// Storm's spout-side RotatingMap). Values below 2, or above
	// MaxTimeoutBuckets, are invalid.
	TimeoutBuckets int
	// InitialCapacity pre-sizes the pending table for this many trees (zero:
	// a small default). The table never shrinks below it. At most
	// MaxPending.
	InitialCapacity int
}

// Validate reports whether c is usable. The error wraps ErrConfig.
func (c Config) Validate() error {
	switch {
	case c.TimeoutBuckets < 0 || c.TimeoutBuckets == 1:
		return fmt.Errorf("%w: TimeoutBuckets is %d, want 0 (default %d) or at least 2",
			ErrConfig, c.TimeoutBuckets, DefaultTimeoutBuckets)
	case c.TimeoutBuckets > MaxTimeoutBuckets:
		return fmt.Errorf("%w: TimeoutBuckets is %d, want at most %d",
			ErrConfig, c.TimeoutBuckets, MaxTimeoutBuckets)
	case c.InitialCapacity < 0:
		return fmt.Errorf("%w: InitialCapacity is %d, want at least 0", ErrConfig, c.InitialCapacity)
	case c.InitialCapacity > MaxPending:
		return fmt.Errorf("%w: InitialCapacity is %d, want at most %d",
			ErrConfig, c.InitialCapacity, MaxPending)
	}
	return nil
}

// buckets returns the effective number of timeout buckets.
func (c Config) buckets() int {
	if c.TimeoutBuckets == 0 {
		return DefaultTimeoutBuckets
	}
	return c.TimeoutBuckets
}
