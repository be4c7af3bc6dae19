package cassandrawindows_test

import (
	"testing"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/cassandra/cassandrawindows"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/windowstoretest"
)

func TestMain(m *testing.M) { cassandratest.Main(m) }

// TestConformance runs the windowstore suite against the real Cassandra
// of scripts/services.sh; it fails under CI=true if Cassandra is not
// configured, and skips otherwise.
func TestConformance(t *testing.T) {
	// Importing testenv here also marks this package as an integration
	// package for the Makefile (run alone, never while a service is down).
	testenv.CassandraHosts(t)
	s := cassandratest.Session(t)
	st, err := cassandrawindows.Open(t.Context(), s, cassandrawindows.Options{Table: cassandratest.Table(t)})
	if err != nil {
		t.Fatal(err)
	}
	windowstoretest.Run(t, func(*testing.T) windowstore.Store { return st })
}
