package drpc

import "sync/atomic"

// Stats counts a Server's requests since it was made, over all its
// functions. Refused requests are those of Overloaded, Busy and TooLarge.
type Stats struct {
	Admitted   uint64 // requests that got past the limits
	Answered   uint64 // answered with their batch's results
	TimedOut   uint64 // their deadline passed, or their caller went away
	Failed     uint64 // their batch failed, or the topology stopped
	Overloaded uint64 // refused: MaxConcurrent requests of the function in flight
	Busy       uint64 // refused: MaxPending requests of the function waiting
	TooLarge   uint64 // refused: arguments over MaxArgs
}

// counters are the Server's live Stats.
type counters struct {
	admitted, answered, timedOut, failed atomic.Uint64
	overloaded, busy, tooLarge           atomic.Uint64
}

// Stats returns the Server's counts.
func (s *Server) Stats() Stats {
	c := &s.counters
	return Stats{
		Admitted: c.admitted.Load(), Answered: c.answered.Load(), TimedOut: c.timedOut.Load(), Failed: c.failed.Load(),
		Overloaded: c.overloaded.Load(), Busy: c.busy.Load(), TooLarge: c.tooLarge.Load(),
	}
}
