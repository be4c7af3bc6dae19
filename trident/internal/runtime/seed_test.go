package runtime

import "testing"

// TestMasterSeedFollowsTopologySeed: with Config.Topology.Seed set, the
// master's jitter seed depends only on it and the start number, so a
// failing seed replays the same retry delays; with zero it is fresh.
func TestMasterSeedFollowsTopologySeed(t *testing.T) {
	if first, again := masterSeed(5, 1), masterSeed(5, 1); first != again {
		t.Fatal("one topology seed gave two master seeds")
	}
	if masterSeed(5, 1) == masterSeed(5, 2) || masterSeed(5, 1) == masterSeed(6, 1) {
		t.Fatal("restarts or seeds share a master seed")
	}
	if fresh, other := masterSeed(0, 1), masterSeed(0, 1); fresh == other {
		t.Fatal("seed 0 is not fresh")
	}
}
