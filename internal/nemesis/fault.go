package nemesis

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrInvalid is matched by the error of a malformed cluster, fault or
// configuration.
var ErrInvalid = errors.New("nemesis: invalid")

// Kind is a kind of fault.
type Kind string

// The kinds of fault. Network kinds become Drops (Fault.Drops); Slow
// changes a host's link; the others are signals to processes.
const (
	// Isolate cuts one host from every other host.
	Isolate Kind = "isolate"
	// Split cuts the hosts in two sides, one holding a majority of the
	// etcd members.
	Split Kind = "split"
	// IsolateLeader cuts the leader nimbus's host from every other host.
	IsolateLeader Kind = "isolate-leader"
	// Share0Peers cuts the host of the topology's share 0 from the other
	// worker hosts, but not from etcd, the nimbuses or the services.
	Share0Peers Kind = "share0-peers"
	// WorkerEtcd cuts a worker host from the etcd members, but not from
	// Kafka and Cassandra.
	WorkerEtcd Kind = "worker-etcd"
	// OneWay drops the packets a host sends to some others; their packets
	// to it still arrive (an asymmetric partition). Half of them are the
	// services host's packets to every worker host: Kafka's and
	// Cassandra's answers are lost, so writes land and their
	// acknowledgements do not (the batch is replayed over its own writes).
	OneWay Kind = "one-way"
	// Loss drops a share of the packets between a host and every other.
	Loss Kind = "loss"
	// Slow delays a host's outgoing packets (netem), or throttles its
	// link where the kernel has no netem (docs/partitions.md).
	Slow Kind = "slow"
	// Kill sends SIGKILL to a daemon; the harness starts it again after
	// Fault.For (a supervisor restarts its workers itself).
	Kill Kind = "kill"
	// Pause sends SIGSTOP to a daemon, SIGCONT at the heal.
	Pause Kind = "pause"
	// EtcdDown kills an etcd member, which stays down until the heal.
	EtcdDown Kind = "etcd-down"
	// Freeze stops every process of share 0's host (SIGSTOP), as a frozen
	// machine: its leases expire, the topology moves, and at the heal the
	// old processes wake up behind the new owner (zombies that fencing
	// must stop).
	Freeze Kind = "freeze"
)

// Kinds lists every kind, in the order of the constants.
func Kinds() []Kind {
	return []Kind{Isolate, Split, IsolateLeader, Share0Peers, WorkerEtcd, OneWay, Loss, Slow, Kill, Pause, EtcdDown, Freeze}
}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, error) {
	for _, k := range Kinds() {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("%w: unknown fault kind %q", ErrInvalid, s)
}

// Network reports whether faults of kind k are packet drops.
func (k Kind) Network() bool {
	switch k {
	case Isolate, Split, IsolateLeader, Share0Peers, WorkerEtcd, OneWay, Loss:
		return true
	}
	return false
}

// Target is what a fault applies to: a host, or a host known only while
// the cluster runs.
type Target string

// Targets resolved while the cluster runs.
const (
	// LeaderNimbus is the host of the leader nimbus.
	LeaderNimbus Target = "@leader"
	// Share0 is the host of the worker running share 0 of the topology
	// (its master, which commits).
	Share0 Target = "@share0"
	// Share1 is the host of the worker running share 1.
	Share1 Target = "@share1"
)

// At returns the target that is host h.
func At(h Host) Target { return Target(h) }

// Dynamic reports whether t is resolved while the cluster runs.
func (t Target) Dynamic() bool { return strings.HasPrefix(string(t), "@") }

// Fault is one fault of an episode.
type Fault struct {
	Kind Kind
	// At is when the fault starts, after the episode's start. Every fault
	// lasts until the episode's heal, except a Kill: its daemon starts
	// again after For.
	At time.Duration
	// Target is the host the fault is about (for Split, unused).
	Target Target
	// Fallback is the host used when a dynamic Target cannot be resolved.
	Fallback Host
	// Role is the daemon a Kill or Pause signals on the target host
	// (Worker: the worker of the share the target names).
	Role Role
	// For is how long a killed daemon stays down (Kill only).
	For time.Duration
	// Sides are the two sides of a Split.
	Sides [2][]Host
	// Peers are the hosts a OneWay fault's target can no longer send to.
	Peers []Host
	// Percent is the share of packets a Loss drops, 1 to 100.
	Percent int
	// Delay is the delay Slow adds to each packet the target sends.
	Delay time.Duration
}

// String returns the fault as the golden files show it, without its
// start time: "split e1,e2,n1|e3,n2", "kill worker@share0 for 3s".
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	switch f.Kind {
	case Split:
		fmt.Fprintf(&b, " %s|%s", joinHosts(f.Sides[0]), joinHosts(f.Sides[1]))
		return b.String()
	case Kill, Pause, EtcdDown:
		fmt.Fprintf(&b, " %s@%s", f.Role, strings.TrimPrefix(string(f.Target), "@"))
	default:
		fmt.Fprintf(&b, " %s", f.Target)
	}
	if f.Target.Dynamic() && f.Fallback != "" {
		fmt.Fprintf(&b, " (else %s)", f.Fallback)
	}
	switch f.Kind {
	case Kill:
		fmt.Fprintf(&b, " for %v", f.For)
	case OneWay:
		fmt.Fprintf(&b, " -> %s", joinHosts(f.Peers))
	case Loss:
		fmt.Fprintf(&b, " %d%%", f.Percent)
	case Slow:
		fmt.Fprintf(&b, " +%v", f.Delay)
	}
	return b.String()
}

func joinHosts(hs []Host) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = string(h)
	}
	return strings.Join(s, ",")
}

// Drop is one directed packet drop: packets From → To are dropped, all of
// them (Percent 100) or that share of them at random.
type Drop struct {
	From, To Host
	Percent  int
}

// String returns "from->to" or "from->to 20%".
func (d Drop) String() string {
	if d.Percent >= 100 {
		return fmt.Sprintf("%s->%s", d.From, d.To)
	}
	return fmt.Sprintf("%s->%s %d%%", d.From, d.To, d.Percent)
}

// Drops returns the packet drops of a network fault whose target is host
// target (resolved by the caller); nil for other kinds.
func (f Fault) Drops(c Cluster, target Host) []Drop {
	var out []Drop
	both := func(a, b Host, pct int) {
		out = append(out, Drop{From: a, To: b, Percent: pct}, Drop{From: b, To: a, Percent: pct})
	}
	switch f.Kind {
	case Isolate, IsolateLeader:
		for _, o := range c.others(target) {
			both(target, o, 100)
		}
	case Split:
		for _, a := range f.Sides[0] {
			for _, b := range f.Sides[1] {
				both(a, b, 100)
			}
		}
	case Share0Peers:
		for _, w := range c.Workers {
			if w != target {
				both(target, w, 100)
			}
		}
	case WorkerEtcd:
		for _, e := range c.Etcd {
			both(target, e, 100)
		}
	case OneWay:
		for _, p := range f.Peers {
			if p != target {
				out = append(out, Drop{From: target, To: p, Percent: 100})
			}
		}
	case Loss:
		for _, o := range c.others(target) {
			both(target, o, f.Percent)
		}
	}
	return out
}
