package kafka

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrDecoderPanic is matched by the decode error of a record whose Decoder
// panicked (a *DecoderPanicError).
var ErrDecoderPanic = errors.New("kafka: the decoder panicked")

// DecoderPanicError is the decode error of a record whose Decoder
// panicked. The spout recovers the panic and treats the record as one the
// decoder rejected: it is counted, logged (with the stack) and
// dead-lettered with this error, and the batch goes on. A panic on bad
// input is thereby no crash loop.
type DecoderPanicError struct {
	Value any // what the decoder panicked with
}

func (e *DecoderPanicError) Error() string {
	return fmt.Sprintf("%v: %v", ErrDecoderPanic, e.Value)
}

// Is makes the error match ErrDecoderPanic.
func (e *DecoderPanicError) Is(target error) bool { return target == ErrDecoderPanic }

// decode calls the spout's decoder on r, recovering a panic as a
// *DecoderPanicError (logged with its stack and counted).
func (s *Spout) decode(r Record) (values []any, err error) {
	defer func() {
		if v := recover(); v != nil {
			values, err = nil, &DecoderPanicError{Value: v}
			s.stats.decoderPanics.Add(1)
			s.cfg.Logger.Warn("kafka spout: the decoder panicked; the record goes to the dead-letter topic",
				"topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "panic", fmt.Sprint(v),
				"stack", string(debug.Stack()))
		}
	}()
	return s.cfg.Decoder.Decode(r)
}
