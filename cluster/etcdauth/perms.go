package etcdauth

import (
	"encoding/hex"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/meta"
)

// Users and roles Enable creates. Each daemon's user holds the role of
// the same name.
const (
	RootUser       = "root"
	RootRole       = "root"
	NimbusUser     = "squall-nimbus"
	NimbusRole     = NimbusUser
	SupervisorUser = "squall-supervisor"
	SupervisorRole = SupervisorUser
	// TopologyPrefix + the topology's name names a topology's role and
	// user.
	TopologyPrefix = "squall-topology-"
)

// TopologyRole returns the name of topology's role, which is also its
// user's name.
func TopologyRole(topology string) string { return TopologyPrefix + topology }

// The types of a Permission, etcd's.
const (
	Read      = clientv3.PermissionType(clientv3.PermRead)
	Write     = clientv3.PermissionType(clientv3.PermWrite)
	ReadWrite = clientv3.PermissionType(clientv3.PermReadWrite)
)

// Permission is one key permission of a role: the key alone (RangeEnd
// empty) or the keys from Key up to RangeEnd (excluded).
type Permission struct {
	Key, RangeEnd string
	Type          clientv3.PermissionType
}

// String shows the permission as etcdctl does: "readwrite /squall/[prefix]".
func (p Permission) String() string {
	t := map[clientv3.PermissionType]string{Read: "read", Write: "write", ReadWrite: "readwrite"}[p.Type]
	switch p.RangeEnd {
	case "":
		return t + " " + p.Key
	case clientv3.GetPrefixRangeEnd(p.Key):
		return t + " " + p.Key + "[prefix]"
	}
	return t + " [" + p.Key + ", " + p.RangeEnd + ")"
}

func prefixPerm(key string, t clientv3.PermissionType) Permission {
	return Permission{Key: key, RangeEnd: clientv3.GetPrefixRangeEnd(key), Type: t}
}

func keyPerm(key string, t clientv3.PermissionType) Permission {
	return Permission{Key: key, Type: t}
}

// all is the prefix of every key of the layout: "P/".
func all(l meta.Layout) string { return l.Prefix + "/" }

// NimbusPermissions are the permissions of the nimbus role of the cluster
// under prefix ("" is meta.DefaultPrefix): every key of the cluster.
func NimbusPermissions(prefix string) []Permission {
	return []Permission{prefixPerm(all(meta.New(prefix)), ReadWrite)}
}

// SupervisorPermissions are the permissions of the supervisor role: read
// every key of the cluster, write supervisors' registrations and crash
// reports. Crash keys begin with the topology (crashes/<t>/<supervisor>/…),
// so they cannot be narrowed to one supervisor by prefix; the role is
// shared by every supervisor.
func SupervisorPermissions(prefix string) []Permission {
	l := meta.New(prefix)
	return []Permission{
		prefixPerm(all(l), Read),
		prefixPerm(l.Supervisors(), ReadWrite),
		prefixPerm(l.Crashes(), ReadWrite),
	}
}

// TopologyPermissions are the permissions of topology's role: what its
// workers read and write (package cluster/worker, and the coordination
// store etcdstore keeps under P/coordination for topologies that name no
// other). Exact keys are granted as keys, not prefixes, so topology "wc"
// gets nothing of "wc2".
func TopologyPermissions(prefix, topology string) []Permission {
	l := meta.New(prefix)
	return []Permission{
		keyPerm(l.Assignment(topology), Read),
		prefixPerm(l.Workers()+topology+"/", ReadWrite),      // meta.Layout.Worker(topology, slot)
		keyPerm(l.Status(topology), ReadWrite),               // under the worker's lease
		keyPerm(l.Generation(topology), ReadWrite),           // by share 0's worker
		prefixPerm(l.ErrorReports()+topology+"/", ReadWrite), // meta.Layout.ErrorReport(topology, slot)
		prefixPerm(CoordinationDir(prefix, topology), ReadWrite),
	}
}

// CoordinationDir returns the directory of topology's keys in the
// cluster's coordination store: "P/coordination/<escaped>/", where
// <escaped> is the name as trident/coordstore/etcdstore escapes an owner
// (every byte that is not visible ASCII, '/' and '%' as '%' and two
// hexadecimal digits).
func CoordinationDir(prefix, topology string) string {
	return meta.New(prefix).Coordination() + "/" + escape(topology) + "/"
}

// escape is etcdstore's owner escaping (trident/coordstore/etcdstore,
// keys.go); the tests check the two agree through a real store.
func escape(name string) string {
	var b strings.Builder
	for i := range len(name) {
		c := name[i]
		if c > ' ' && c < 0x7f && c != '/' && c != '%' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteString(hex.EncodeToString([]byte{c}))
	}
	return b.String()
}
