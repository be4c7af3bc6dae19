package kafka

import (
	"sync"
	"testing"
)

// TestLetterCountsNeverDisagree: every snapshot of the counters has
// DecodeFailures = DeadLettered + DeadLettersSkipped, even while letters
// are being counted.
func TestLetterCountsNeverDisagree(t *testing.T) {
	s := &Spout{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 20000 {
			s.stats.letterSettled(i%3 != 0)
		}
	})
	for range 2000 {
		st := s.Stats()
		if st.DecodeFailures != st.DeadLettered+st.DeadLettersSkipped {
			t.Fatalf("snapshot disagrees: %d decode failures, %d lettered, %d skipped", st.DecodeFailures, st.DeadLettered, st.DeadLettersSkipped)
		}
	}
	wg.Wait()
	if st := s.Stats(); st.DecodeFailures != 20000 || st.DeadLettersSkipped != 6667 {
		t.Fatalf("final %+v", st)
	}
}
