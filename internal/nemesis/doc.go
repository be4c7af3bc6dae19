// Package nemesis is the pure core of the partition harness
// (cmd/squall-partitions, docs/partitions.md): the hosts of the test
// cluster, the faults the harness injects, seeded schedules of those
// faults, and the packet drops a network fault stands for.
//
// It runs nothing and reads no clock. A Schedule is a list of episodes;
// an episode starts faults at offsets from its start, holds them, then
// heals everything (the harness then waits for the topology to commit
// again before the next episode). Generate draws a schedule from a seed
// with math/rand/v2, so a failing schedule is rerun from its seed alone;
// Schedule.Format is its canonical text, pinned by golden tests.
//
// Some targets are known only while the cluster runs: the leader nimbus,
// the host of a topology's share 0 or share 1. A Fault names them as a
// Target and carries a Fallback host drawn from the seed; the harness
// resolves the target when the fault starts and uses the fallback when it
// cannot.
//
// Network faults become Drops: "packets from host A to host B are
// dropped" (with a probability for packet loss). The harness turns each
// into a rule on the receiving host (iptables INPUT), so a sender sees
// silence, as behind a real partition, rather than a local error.
package nemesis
