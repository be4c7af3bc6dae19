package kafka

import (
	"time"

	"github.com/squallstream/squall/trident/spout"
)

// NewEmitter returns the emitter of task, as the spout's sources make it.
func (s *Spout) NewEmitter(task int) spout.Emitter[Meta] { return s.newEmitter(task) }

// SetListerClock replaces the lister's clock.
func (s *Spout) SetListerClock(now func() time.Time) {
	s.lister.mu.Lock()
	s.lister.now = now
	s.lister.mu.Unlock()
}
