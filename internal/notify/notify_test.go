package notify

import (
	"testing"
	"testing/synctest"
)

func TestBroadcastWakesEveryWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var s Signal
		const waiters = 3
		woke := make(chan int, waiters)
		for i := range waiters {
			ch := s.Wait()
			go func() { <-ch; woke <- i }()
		}
		synctest.Wait()
		if len(woke) != 0 {
			t.Fatalf("%d waiters woke before Broadcast", len(woke))
		}
		s.Broadcast()
		synctest.Wait()
		if len(woke) != waiters {
			t.Fatalf("%d of %d waiters woke after Broadcast", len(woke), waiters)
		}
	})
}

func TestWaitAfterBroadcastBlocksUntilNext(t *testing.T) {
	var s Signal
	old := s.Wait()
	s.Broadcast()
	select {
	case <-old:
	default:
		t.Fatal("the channel taken before Broadcast is still open")
	}
	next := s.Wait()
	select {
	case <-next:
		t.Fatal("a channel taken after Broadcast is already closed")
	default:
	}
	if s.Wait() != next {
		t.Fatal("two Waits between Broadcasts returned different channels")
	}
	s.Broadcast()
	<-next
}

func TestBroadcastWithoutWaitersAllocatesNothing(t *testing.T) {
	var s Signal
	if n := testing.AllocsPerRun(100, s.Broadcast); n != 0 {
		t.Fatalf("Broadcast allocated %v times with nobody waiting", n)
	}
}
