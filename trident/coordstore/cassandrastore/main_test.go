package cassandrastore_test

import (
	"testing"

	"github.com/squallstream/squall/state/cassandra/cassandratest"
)

func TestMain(m *testing.M) { cassandratest.Main(m) }
