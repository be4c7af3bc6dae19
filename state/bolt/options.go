package bolt

import (
	"errors"
	"fmt"
	"time"
)

// DefaultBucket is the bucket used when Options.Bucket is empty.
const DefaultBucket = "squall"

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Bucket names the bucket holding the map. Empty means DefaultBucket.
	Bucket string
	// LockTimeout bounds the wait for the file lock held by another
	// process. Zero means one second; negative means wait forever.
	LockTimeout time.Duration
	// NoSync skips fsync after each put. Faster, and a machine crash may
	// then lose or tear recent puts. Only for tests and throwaway data.
	NoSync bool
	// Mode is the file mode used when creating the file. Zero means 0600.
	Mode uint32
}

// Validate reports whether the options are usable.
func (o Options) Validate() error {
	if len(o.Bucket) > 255 {
		return fmt.Errorf("bolt: bucket name of %d bytes: at most 255", len(o.Bucket))
	}
	if o.Mode > 0o777 {
		return errors.New("bolt: mode must be a permission mode (at most 0777)")
	}
	return nil
}

func (o Options) bucket() []byte {
	if o.Bucket == "" {
		return []byte(DefaultBucket)
	}
	return []byte(o.Bucket)
}

func (o Options) lockTimeout() time.Duration {
	switch {
	case o.LockTimeout == 0:
		return time.Second
	case o.LockTimeout < 0:
		return 0 // bbolt: wait forever
	default:
		return o.LockTimeout
	}
}
