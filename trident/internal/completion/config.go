package completion

import (
	"errors"
	"fmt"
)

// ErrInvalidConfig is wrapped by Config.Validate's errors.
var ErrInvalidConfig = errors.New("completion: invalid config")

// Config is the shape of a stage, as one of its tasks sees it.
type Config struct {
	// Reports is the number of reports per batch: one per upstream task.
	Reports int
	// EarlyReports is how many of them come from upstream stages that
	// report in the processing phase.
	EarlyReports int
	// Late names the upstream components that report in the commit phase;
	// it is empty exactly when EarlyReports equals Reports.
	Late []string
	// Committer is set for a stage that writes state: it finishes a batch
	// in the commit phase, anchored to the commit.
	Committer bool
}

// Validate reports a config that does not describe a stage with upstream
// tasks.
func (c Config) Validate() error {
	switch {
	case c.Reports < 1:
		return fmt.Errorf("%w: %d reports per batch, want at least 1", ErrInvalidConfig, c.Reports)
	case c.EarlyReports < 0 || c.EarlyReports > c.Reports:
		return fmt.Errorf("%w: %d early reports of %d", ErrInvalidConfig, c.EarlyReports, c.Reports)
	case (len(c.Late) > 0) != (c.EarlyReports < c.Reports):
		return fmt.Errorf("%w: %d early reports of %d, late components %q", ErrInvalidConfig, c.EarlyReports, c.Reports, c.Late)
	}
	return nil
}
