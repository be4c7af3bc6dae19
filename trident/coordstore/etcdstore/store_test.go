package etcdstore_test

import (
	"testing"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/coordstoretest"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
)

// TestConformance runs the coordination-store suite on an in-process
// single-node etcd: each location is a prefix of its own, and every open
// is a new store over one client, which closing a store leaves open.
func TestConformance(t *testing.T) {
	cli := client(t, embedded(t))
	coordstoretest.Run(t, coordstoretest.Factory{
		New: func(t *testing.T) coordstoretest.Opener {
			prefix := newPrefix(t, nil)
			return func() (coordstore.Store, error) {
				return etcdstore.New(cli, prefix, etcdstore.Options{})
			}
		},
		Durable: true,
	})
}

// TestConformanceCluster runs the suite on the real three-member etcd
// cluster of scripts/services.sh. Every open dials a client of its own,
// which the store owns and closes.
func TestConformanceCluster(t *testing.T) {
	endpoints := testenv.EtcdEndpoints(t)
	cleaner := client(t, endpoints)
	coordstoretest.Run(t, coordstoretest.Factory{
		New: func(t *testing.T) coordstoretest.Opener {
			prefix := newPrefix(t, cleaner)
			return func() (coordstore.Store, error) {
				return etcdstore.Dial(clientConfig(endpoints), prefix, etcdstore.Options{})
			}
		},
		Durable: true,
	})
}
