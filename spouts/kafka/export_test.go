package kafka

import "github.com/squallstream/squall/trident/spout"

// NewEmitter returns the emitter of task, as the spout's sources make it.
func (s *Spout) NewEmitter(task int) spout.Emitter[Meta] { return s.newEmitter(task) }

// LetterWriter is the seam dead letters are written through.
type LetterWriter = letterWriter

// WrapDeadLetters wraps the spout's dead-letter writer.
func (s *Spout) WrapDeadLetters(wrap func(LetterWriter) LetterWriter) { s.dlq.w = wrap(s.dlq.w) }

// DeadLetterLimit is the largest record batch the spout believes the
// dead-letter topic accepts.
func (s *Spout) DeadLetterLimit() int { return s.dlq.maxBytes }
