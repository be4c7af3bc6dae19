package cassandra_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
)

// TestVersions: a name is at version 1 until switched; a switch from the
// version in use moves it, a switch from any other fails and names the
// one in use; of concurrent switches from one version exactly one wins.
func TestVersions(t *testing.T) {
	s := cassandratest.Session(t)
	v, err := cassandra.OpenVersions(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	name := cassandratest.Table(t)
	if cur, err := v.Current(t.Context(), name); err != nil || cur != 1 {
		t.Fatalf("Current before any switch = %d, %v; want 1", cur, err)
	}
	if err := v.Switch(t.Context(), name, 1, 2); err != nil {
		t.Fatalf("Switch 1 → 2: %v", err)
	}
	if cur, _ := v.Current(t.Context(), name); cur != 2 {
		t.Fatalf("Current after the switch = %d, want 2", cur)
	}
	if err := v.Switch(t.Context(), name, 1, 3); !errors.Is(err, cassandra.ErrVersionChanged) {
		t.Fatalf("Switch from a stale version = %v, want ErrVersionChanged", err)
	}
	if err := v.Switch(t.Context(), name, 2, 2); err == nil {
		t.Fatal("a switch to the same version was accepted")
	}

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = v.Switch(t.Context(), name, 2, 10+i) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, cassandra.ErrVersionChanged):
			t.Fatalf("a concurrent switch failed otherwise: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of 4 concurrent switches from version 2 won, want 1: %v", won, errs)
	}
	if cur, _ := v.Current(t.Context(), name); cur < 10 {
		t.Fatalf("Current after the race = %d", cur)
	}
	for version, want := range map[int]string{1: "room_timelines", 2: "room_timelines_v2", 12: "room_timelines_v12"} {
		if got := cassandra.VersionedName("room_timelines", version); got != want {
			t.Errorf("VersionedName(room_timelines, %d) = %q, want %q", version, got, want)
		}
	}
}
