package cassandrastore_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/cassandrastore"
	"github.com/squallstream/squall/trident/coordstore/coordstoretest"
)

var namespaces atomic.Int64

// TestConformance runs the coordination-store suite on real Cassandra:
// each location is a namespace of its own in tables shared by the run,
// and reopening opens a new store on a new session.
func TestConformance(t *testing.T) {
	// Importing testenv here also marks this package as an integration
	// package for the Makefile (run alone, never while a service is down).
	testenv.CassandraHosts(t)
	coordstoretest.Run(t, coordstoretest.Factory{
		New: func(t *testing.T) coordstoretest.Opener {
			ns := fmt.Sprintf("ns%d", namespaces.Add(1))
			return func() (coordstore.Store, error) {
				return cassandrastore.Open(t.Context(), cassandratest.Connect(t), cassandrastore.Options{Namespace: ns})
			}
		},
		Durable: true,
	})
}
