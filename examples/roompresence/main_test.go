package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// mainVar makes the test binary run main instead of the tests, so that
// tests (and the processes chaos starts) can run the example's commands.
const mainVar = "ROOMPRESENCE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainVar) == "1" {
		main()
		os.Exit(0)
	}
	// gocql may leave a schema-agreement wait running for a while after
	// DROP KEYSPACE (the chaos test's clean-up); Session.Close does not
	// stop it.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/gocql/gocql.(*Conn).awaitSchemaAgreement"))
}
