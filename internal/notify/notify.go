// Package notify has Signal, a broadcast that goroutines wait on with
// select: a waiter takes the channel of the current generation, checks its
// condition, and waits for that channel to close; Broadcast closes it and
// starts a new generation. Nothing is missed between the check and the
// wait, because the channel was taken before the check.
//
// It replaces polling loops (sleep, check, repeat) where the code that
// changes the condition is ours and can announce the change.
package notify

import "sync"

// Signal is a condition broadcast. The zero Signal is ready to use and
// must not be copied after first use.
type Signal struct {
	mu sync.Mutex
	ch chan struct{} // nil while nobody waits
}

// Wait returns a channel that is closed by the next Broadcast. Take it
// before checking the condition it guards.
func (s *Signal) Wait() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

// Broadcast wakes every goroutine waiting on a channel from Wait. It
// allocates nothing when nobody waits.
func (s *Signal) Broadcast() {
	s.mu.Lock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
	s.mu.Unlock()
}
