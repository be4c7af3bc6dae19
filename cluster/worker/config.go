package worker

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"

	"github.com/squallstream/squall/cluster/meta"
)

// Validate reports a Config that Run would refuse: no Client, no
// Topology.Build, a topology name that cannot be part of a key, a
// negative duration.
func (c Config) Validate() error {
	switch {
	case c.Client == nil || c.Topology.Build == nil:
		return errors.New("worker: Config.Client and Config.Topology.Build are required")
	case c.TTL < 0 || c.StatusInterval < 0 || c.ErrorInterval < 0 || c.StopTimeout < 0:
		return errors.New("worker: negative duration in Config")
	}
	if err := meta.CheckName("topology", c.Topology.Name); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// withDefaults returns c with every zero field that has a default set to
// it: DefaultTTL, DefaultStatusInterval, DefaultErrorInterval,
// DefaultStopTimeout, DefaultListen and slog.Default().
func (c Config) withDefaults() Config {
	c.TTL = cmp.Or(c.TTL, DefaultTTL)
	c.StatusInterval = cmp.Or(c.StatusInterval, DefaultStatusInterval)
	c.ErrorInterval = cmp.Or(c.ErrorInterval, DefaultErrorInterval)
	c.StopTimeout = cmp.Or(c.StopTimeout, DefaultStopTimeout)
	c.Listen = cmp.Or(c.Listen, DefaultListen)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
