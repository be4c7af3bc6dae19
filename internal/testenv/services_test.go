package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestServicesScriptErrors checks the one-line errors the helpers pass on,
// without touching the real services: a bad service name, and a services
// directory where `up` never ran.
func TestServicesScriptErrors(t *testing.T) {
	t.Setenv("SQUALL_SERVICES_DIR", t.TempDir())
	for _, tc := range []struct{ verb, name, want string }{
		{"stop", "zookeeper", "unknown service zookeeper: expected kafka, cassandra or etcd"},
		{"restart", "", "unknown service"},
		{"start", "kafka", "kafka is not set up in "},
		{"stop", "cassandra", "run 'scripts/services.sh up' first"},
		{"start", "etcd", "etcd is not set up in "},
	} {
		_, _, err := runServices(tc.verb, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("services.sh %s %q: err = %v, want it to contain %q", tc.verb, tc.name, err, tc.want)
		}
	}
}

// TestRequireExclusive runs this test binary again and checks what a test
// that would stop a service does without SQUALL_SERVICES_EXCLUSIVE: skip
// normally, fail under CI, run when it is set.
func TestRequireExclusive(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		t.Skip("only the parent runs this")
	}
	for _, tc := range []struct {
		ci, exclusive string
		wantFail      bool
		want          string
	}{
		{"", "", false, "--- SKIP: TestChildStopsServices"},
		{"true", "", true, "--- FAIL: TestChildStopsServices"},
		{"true", "0", true, "--- FAIL: TestChildStopsServices"},
		{"true", "1", false, "--- PASS: TestChildStopsServices"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildStopsServices$", "-test.v")
		cmd.Env = append(filterEnv(os.Environ(), ExclusiveVar, "CI"),
			"TESTENV_CHILD=1", "CI="+tc.ci, ExclusiveVar+"="+tc.exclusive)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("CI=%q %s=%q: failed=%v, want %v\n%s", tc.ci, ExclusiveVar, tc.exclusive, failed, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("CI=%q %s=%q: output lacks %q:\n%s", tc.ci, ExclusiveVar, tc.exclusive, tc.want, out)
		}
		if tc.want != "--- PASS: TestChildStopsServices" && !strings.Contains(string(out), "make test") {
			t.Errorf("CI=%q %s=%q: output does not say how to run the test:\n%s", tc.ci, ExclusiveVar, tc.exclusive, out)
		}
	}
}

func TestChildStopsServices(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "1" {
		t.Skip("run by TestRequireExclusive")
	}
	RequireExclusive(t)
}
