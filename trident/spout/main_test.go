package spout_test

import (
	"context"
	"testing"

	"github.com/squallstream/squall/trident/coordstore"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testFence is the owner and generation the tests write metadata for:
// ownedStore's current one.
var testFence = coordstore.Fence{Owner: "topo", Generation: 1}

// ownedStore returns a memory store in which testFence is current.
func ownedStore() *coordstore.Memory {
	s := coordstore.NewMemory()
	if _, err := s.Acquire(context.Background(), testFence.Owner); err != nil {
		panic(err)
	}
	return s
}
