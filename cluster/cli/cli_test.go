package cli

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/squallstream/squall/cluster/worker"
	"github.com/squallstream/squall/trident"
)

func program(t *testing.T, env map[string]string) (*Program, *bytes.Buffer) {
	build := func(worker.Env) (*trident.Topology, trident.Config, error) { return nil, trident.Config{}, nil }
	reg, err := NewRegistry([]worker.Topology{{Name: "wc", Build: build}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	return &Program{Registry: reg, Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }}, &out
}

func TestRegistryRefusesBadEntries(t *testing.T) {
	build := func(worker.Env) (*trident.Topology, trident.Config, error) { return nil, trident.Config{}, nil }
	for _, ts := range [][]worker.Topology{
		{{Name: "a/b", Build: build}},
		{{Name: "a"}},
		{{Name: "a", Build: build}, {Name: "a", Build: build}},
	} {
		if _, err := NewRegistry(ts); err == nil {
			t.Errorf("registry %v accepted", ts)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{[]string{"frobnicate"}, nil, ExitUsage, `unknown command "frobnicate"`},
		{[]string{"submit"}, nil, ExitUsage, "want one topology NAME"},
		{[]string{"submit", "nope"}, nil, ExitError, `unknown topology "nope"; this program registers: wc`},
		{[]string{"submit", "wc", "--workers", "0"}, nil, ExitUsage, "want at least 1"},
		{[]string{"submit", "wc", "--bogus"}, nil, ExitUsage, "flag provided but not defined: -bogus"},
		{[]string{"list"}, map[string]string{"SQUALL_ETCD_DIAL_TIMEOUT": "soon"}, ExitUsage, "SQUALL_ETCD_DIAL_TIMEOUT"},
		{[]string{"list", "--etcd-cert", "c.pem"}, nil, ExitError, "--etcd-cert and --etcd-key go together"},
		{[]string{"supervisor", "--slots", "0"}, nil, ExitUsage, "--slots 0"},
		{[]string{"worker", "--topology", "wc"}, nil, ExitUsage, "--supervisor and --port are required"},
		{[]string{"worker", "--topology", "x", "--supervisor", "s", "--port", "1"}, nil, ExitUsage, `unknown topology "x"`},
	} {
		p, out := program(t, tc.env)
		if code := Run(context.Background(), p, tc.args); code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit %d and %q", tc.args, code, out.String(), tc.code, tc.want)
		}
	}
}

func TestEnvironmentSetsFlagsAndTheCommandLineWins(t *testing.T) {
	p, _ := program(t, map[string]string{"SQUALL_ETCD_ENDPOINTS": "a:1", "SQUALL_SUPERVISOR_ID": "s9", "SQUALL_ID": "general",
		"SQUALL_SLOTS": "7"})
	for _, tc := range []struct {
		args                 []string
		endpoints, id, slots string
	}{
		{nil, "a:1", "s9", "7"},
		{[]string{"--etcd-endpoints", "b:2", "--id", "x", "--slots", "1"}, "b:2", "x", "1"},
	} {
		fs := newFlagSetForTest()
		var e etcdFlags
		var sf supervisorFlags
		e.register(fs)
		sf.register(fs, "d")
		if _, err := parse(p, fs, "supervisor", tc.args, 0); err != nil {
			t.Fatal(err)
		}
		if e.endpoints != tc.endpoints || sf.id != tc.id || fs.Lookup("slots").Value.String() != tc.slots {
			t.Errorf("%v: endpoints %q id %q slots %s", tc.args, e.endpoints, sf.id, fs.Lookup("slots").Value)
		}
	}
}

func newFlagSetForTest() *flag.FlagSet { return flag.NewFlagSet("test", flag.ContinueOnError) }
