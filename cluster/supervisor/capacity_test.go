package supervisor

import (
	"testing"

	"github.com/squallstream/squall/cluster/meta"
)

// TestRegistrationPublishesCapacity: the registration record carries the
// configured capacity, which the nimbus's scheduler reads.
func TestRegistrationPublishesCapacity(t *testing.T) {
	s := &Supervisor{cfg: Config{ID: "s1", Ports: []int{2, 1}, Capacity: meta.Resources{CPU: 400, MemoryMB: 8192}}}
	var info meta.SupervisorInfo
	if err := meta.Decode("k", []byte(s.info()), &info); err != nil {
		t.Fatal(err)
	}
	if info.Capacity != (meta.Resources{CPU: 400, MemoryMB: 8192}) || info.ID != "s1" {
		t.Fatalf("registered %+v", info)
	}
}
