package runtime

// The batches in flight: the txids the coordinator has active (announced,
// processed and waiting to commit, or committing), published after every
// action of the master that can change them.

// publishInFlight counts the coordinator's active txids into the status.
// They form a prefix of its window, so the count stops at the first
// inactive one.
func (m *master) publishInFlight() {
	if m.coord == nil {
		return
	}
	n := int64(0)
	for t := m.coord.Committed() + 1; ; t++ {
		if _, st := m.coord.Status(t); st == 0 {
			break
		}
		n++
	}
	m.status.inFlight.Store(n)
}

// InFlight returns the number of batches in flight: announced and not yet
// committed or failed.
func (s *Status) InFlight() int64 { return s.inFlight.Load() }
