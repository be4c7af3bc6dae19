package topology

// listenForWakes sets the channel that ends the executor's idle wait. With
// one Waker task it is that task's channel; with several, each gets a
// forwarder goroutine that merges its wake-ups into one channel (so the
// idle select stays fixed in size), stopped by stopWakes.
func (s *spoutExecutor) listenForWakes() {
	var chans []<-chan struct{}
	for _, t := range s.tasks {
		if t.waker == nil {
			continue
		}
		s.current = t.id
		if c := t.waker.Wake(); c != nil {
			chans = append(chans, c)
		}
	}
	switch len(chans) {
	case 0:
	case 1:
		s.wake = chans[0]
	default:
		merged := make(chan struct{}, 1)
		s.wake = merged
		s.quitWake = make(chan struct{})
		for _, c := range chans {
			s.forwarded.Add(1)
			go s.forwardWakes(c, merged)
		}
	}
}

func (s *spoutExecutor) forwardWakes(from <-chan struct{}, to chan<- struct{}) {
	defer s.forwarded.Done()
	for {
		select {
		case _, ok := <-from:
			if !ok {
				return
			}
			select {
			case to <- struct{}{}:
			default: // a wake-up is already waiting
			}
		case <-s.quitWake:
			return
		}
	}
}

// stopWakes stops the forwarders of listenForWakes.
func (s *spoutExecutor) stopWakes() {
	if s.quitWake != nil {
		close(s.quitWake)
		s.forwarded.Wait()
	}
}
