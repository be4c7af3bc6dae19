package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ExclusiveVar names the variable that says no other test process uses the
// services meanwhile, so a test may stop them. `make test` and
// `make test-integration` set it for the integration packages, which they
// run one at a time (go test -p 1).
const ExclusiveVar = "SQUALL_SERVICES_EXCLUSIVE"

// RequireExclusive skips the test (fails it under CI) unless ExclusiveVar
// holds a true value. StopService, StartService and RestartService call it;
// a fault-injection test calls it first thing, before it sets anything up.
func RequireExclusive(t testing.TB) {
	t.Helper()
	if ok, err := strconv.ParseBool(os.Getenv(ExclusiveVar)); err == nil && ok {
		return
	}
	msg := ExclusiveVar + " is not set to a true value: this test stops and starts the shared Kafka or Cassandra, " +
		"so no other package's tests may run meanwhile; run it with `make test` or `make test-integration` " +
		"(integration packages one at a time), or set " + ExclusiveVar + "=1 when nothing else uses the services"
	skipOrFail(t, msg)
}

// StopService stops "kafka", "cassandra" or "etcd" (all three members)
// with scripts/services.sh stop and waits for its processes to exit. A clean-up of the test starts the service
// again, so a failing test never leaves it stopped; register clean-ups that
// need the service (t.Cleanup, not defer) before calling StopService, so they
// run after it is back.
func StopService(t testing.TB, name string) {
	t.Helper()
	services(t, "stop", name, true)
}

// StartService starts a stopped service again (scripts/services.sh start) on
// the same ports with the same data, and returns once a client can use it. It
// only waits for the service to answer if it already runs.
func StartService(t testing.TB, name string) {
	t.Helper()
	services(t, "start", name, false)
}

// RestartService stops and starts a service (scripts/services.sh restart);
// its data survives. Like StopService it makes sure the service runs again
// when the test ends.
func RestartService(t testing.TB, name string) {
	t.Helper()
	services(t, "restart", name, true)
}

// services runs scripts/services.sh VERB NAME and fails the test with the
// script's message if that fails. With restart set, a clean-up starts the
// service again (nothing but a readiness check if it runs).
func services(t testing.TB, verb, name string, restart bool) {
	t.Helper()
	RequireExclusive(t)
	if restart {
		t.Cleanup(func() {
			if out, _, err := runServices("start", name); err != nil {
				t.Errorf("testenv: clean-up could not start %s again: %v\n%s", name, err, out)
			}
		})
	}
	out, took, err := runServices(verb, name)
	if err != nil {
		t.Fatalf("testenv: %v\n%s", err, out)
	}
	t.Logf("testenv: scripts/services.sh %s %s took %v:\n%s", verb, name, took.Round(100*time.Millisecond), strings.TrimSpace(out))
}

// runServices runs scripts/services.sh VERB NAME from the module root; err
// carries the script's own `services: error: ...` line when it printed one.
func runServices(verb, name string) (out string, took time.Duration, err error) {
	root, err := moduleRoot()
	if err != nil {
		return "", 0, err
	}
	var buf bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "services.sh"), verb, name)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	err = cmd.Run()
	took = time.Since(start)
	out = buf.String()
	if err != nil {
		msg := err.Error()
		for _, line := range strings.Split(out, "\n") {
			if m, ok := strings.CutPrefix(line, "services: error: "); ok {
				msg = m
			}
		}
		return out, took, fmt.Errorf("scripts/services.sh %s %s failed: %s", verb, name, msg)
	}
	return out, took, nil
}

// moduleRoot is the nearest directory above the working directory (a test's
// package directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: no go.mod above the working directory, so scripts/services.sh cannot be found")
		}
		dir = parent
	}
}
