package testenv

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	env := map[string]string{
		"ONE":   "127.0.0.1:19092",
		"TWO":   " 127.0.0.1:1 , 127.0.0.2:2 ,",
		"EMPTY": " , ",
	}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"ONE", []string{"127.0.0.1:19092"}},
		{"TWO", []string{"127.0.0.1:1", "127.0.0.2:2"}},
		{"EMPTY", nil},
		{"UNSET", nil},
	} {
		got, msg := lookup(getenv, "Kafka", tc.name)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("lookup(%s) = %q, want %q", tc.name, got, tc.want)
		}
		if (msg == "") != (tc.want != nil) {
			t.Errorf("lookup(%s) message = %q", tc.name, msg)
		}
		if msg != "" && !strings.Contains(msg, "scripts/services.sh up") {
			t.Errorf("lookup(%s) message does not say how to start the services: %q", tc.name, msg)
		}
	}
}

func TestUniqueName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)
	for _, tc := range []struct{ prefix, test string }{
		{"squall", "TestProduceFetch/real_kafka"},
		{"", "TestX"},
		{"9lives", "Test"},
		{"squall", strings.Repeat("TestVeryLongName", 10)},
		{strings.Repeat("p", 60), "TestX"},
	} {
		got := uniqueName(tc.prefix, tc.test, "0123abcd")
		if !valid.MatchString(got) || !strings.HasSuffix(got, "_0123abcd") {
			t.Errorf("uniqueName(%q, %q) = %q: not a valid keyspace/topic name with the suffix", tc.prefix, tc.test, got)
		}
	}
	if a, b := UniqueName(t, "x"), UniqueName(t, "x"); a == b {
		t.Errorf("two calls gave the same name %q", a)
	}
}

// TestMissingServices runs this test binary again without the service
// variables and checks what a test that needs Kafka does: skip normally,
// fail under CI.
func TestMissingServices(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		t.Skip("only the parent runs this")
	}
	for _, tc := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"", false, "--- SKIP: TestChildNeedsKafka"},
		{"false", false, "--- SKIP: TestChildNeedsKafka"},
		{"true", true, "--- FAIL: TestChildNeedsKafka"},
		{"1", true, "--- FAIL: TestChildNeedsKafka"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChildNeedsKafka$", "-test.v")
		cmd.Env = append(filterEnv(os.Environ(), KafkaBrokersVar, CassandraHostsVar, "CI"),
			"TESTENV_CHILD=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("CI=%q: failed=%v, want %v\n%s", tc.ci, failed, tc.wantFail, out)
		}
		if !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "scripts/services.sh up") {
			t.Errorf("CI=%q: output lacks %q or the hint to start the services:\n%s", tc.ci, tc.want, out)
		}
	}
}

func TestChildNeedsKafka(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") != "1" {
		t.Skip("run by TestMissingServices")
	}
	KafkaBrokers(t)
	t.Log("unreachable when SQUALL_KAFKA_BROKERS is unset")
}

func filterEnv(env []string, drop ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, d := range drop {
			if strings.HasPrefix(kv, d+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
