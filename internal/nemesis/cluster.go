package nemesis

import (
	"fmt"
	"slices"
)

// Host names one host of the test cluster: a network namespace of its
// own, such as "e1" or "w2".
type Host string

// Role is what a daemon is.
type Role string

// The daemons' roles.
const (
	Etcd       Role = "etcd"
	Nimbus     Role = "nimbus"
	Supervisor Role = "supervisor"
	Worker     Role = "worker"
)

// Cluster is the test cluster's hosts by role. Every host runs the
// daemons of one role, except the worker hosts (a supervisor and its
// workers) and the services host (Kafka and Cassandra).
type Cluster struct {
	Etcd     []Host // one etcd member each
	Nimbus   []Host // one nimbus each
	Workers  []Host // one supervisor each, and the workers it starts
	Services Host   // Kafka and Cassandra
}

// DefaultCluster is the harness's cluster: three etcd members, two
// nimbuses, three worker hosts and one services host.
func DefaultCluster() Cluster {
	return Cluster{Etcd: []Host{"e1", "e2", "e3"}, Nimbus: []Host{"n1", "n2"}, Workers: []Host{"w1", "w2", "w3"},
		Services: "svc"}
}

// Hosts returns every host: etcd, nimbus, worker hosts, then services.
func (c Cluster) Hosts() []Host {
	out := slices.Concat(c.Etcd, c.Nimbus, c.Workers)
	if c.Services != "" {
		out = append(out, c.Services)
	}
	return out
}

// Validate checks that the cluster has hosts of every role and that no
// host name appears twice.
func (c Cluster) Validate() error {
	if len(c.Etcd) == 0 || len(c.Nimbus) == 0 || len(c.Workers) == 0 || c.Services == "" {
		return fmt.Errorf("%w: want etcd, nimbus, worker and services hosts", ErrInvalid)
	}
	seen := map[Host]bool{}
	for _, h := range c.Hosts() {
		if h == "" || seen[h] {
			return fmt.Errorf("%w: host %q empty or twice", ErrInvalid, h)
		}
		seen[h] = true
	}
	return nil
}

// RoleOf returns the role of the daemons on h (Supervisor for a worker
// host), and false for the services host or an unknown one.
func (c Cluster) RoleOf(h Host) (Role, bool) {
	switch {
	case slices.Contains(c.Etcd, h):
		return Etcd, true
	case slices.Contains(c.Nimbus, h):
		return Nimbus, true
	case slices.Contains(c.Workers, h):
		return Supervisor, true
	}
	return "", false
}

// others returns every host but h, in Hosts order.
func (c Cluster) others(h Host) []Host {
	var out []Host
	for _, o := range c.Hosts() {
		if o != h {
			out = append(out, o)
		}
	}
	return out
}
