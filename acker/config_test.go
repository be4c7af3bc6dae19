package acker

import (
	"errors"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	valid := []Config{
		{},
		{TimeoutBuckets: 2},
		{TimeoutBuckets: 3},
		{TimeoutBuckets: MaxTimeoutBuckets},
		{InitialCapacity: 1},
		{InitialCapacity: 1 << 20},
		{InitialCapacity: MaxPending},
	}
	for _, c := range valid {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v, want nil", c, err)
		}
	}
	invalid := []Config{
		{TimeoutBuckets: 1},
		{TimeoutBuckets: -1},
		{TimeoutBuckets: MaxTimeoutBuckets + 1},
		{InitialCapacity: -1},
		{InitialCapacity: MaxPending + 1},
	}
	for _, c := range invalid {
		err := c.Validate()
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%+v.Validate() = %v, want an error wrapping ErrConfig", c, err)
			continue
		}
		tr, nerr := New(c)
		if tr != nil || !errors.Is(nerr, ErrConfig) {
			t.Errorf("New(%+v) = %v, %v; want nil and an error wrapping ErrConfig", c, tr, nerr)
		}
	}
}

func TestConfigDefaultBuckets(t *testing.T) {
	if got := (Config{}).buckets(); got != 2 {
		t.Errorf("default buckets = %d, want 2", got)
	}
	tr := mustNew(t, Config{})
	if len(tr.counts) != 2 {
		t.Errorf("tracker has %d buckets, want 2", len(tr.counts))
	}
}
