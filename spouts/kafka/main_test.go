package kafka_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(childVar) != "" {
		// A child process of an exactly-once test: run the one test it
		// names and nothing else (see exactlyonce_test.go).
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}

// childVar marks a child process of an exactly-once test.
const childVar = "SQUALL_KAFKA_CHILD"
