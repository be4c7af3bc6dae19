package cli

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/squallstream/squall/cluster/supervisor"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0":                   0,
		"1073741824":          1 << 30,
		"512MiB":              512 << 20,
		"2GiB":                2 << 30,
		"2 gib":               2 << 30,
		" 64KiB ":             64 << 10,
		"2G":                  2 << 30,
		"100M":                100 << 20,
		"1GB":                 1e9,
		"3kb":                 3000,
		"1TiB":                1 << 40,
		"7B":                  7,
		"9223372036854775807": math.MaxInt64,
		"8388607TiB":          8388607 << 40,
	} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "-1GiB", "1.5GiB", "2 GiBs", "2 PiB", "1e9", "0x10",
		"9223372036854775808", "8388608TiB", "10 000"} {
		if got, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", in, got)
		}
	}
}

// The isolation flags and their environment variables reach the
// supervisor's Config.
func TestSupervisorIsolationFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want supervisor.Isolation
	}{
		{nil, nil, supervisor.Isolation{}},
		{[]string{"--worker-user", "root:0", "--worker-memory", "512MiB", "--worker-open-files", "4096", "--worker-pids", "300",
			"--worker-cgroup-parent", "/sys/fs/cgroup/squall.slice"}, nil,
			supervisor.Isolation{RunAs: &supervisor.RunAs{Name: "root"}, MemoryBytes: 512 << 20, OpenFiles: 4096, Pids: 300,
				CgroupParent: "/sys/fs/cgroup/squall.slice"}},
		{nil, map[string]string{"SQUALL_SUPERVISOR_WORKER_USER": "0", "SQUALL_SUPERVISOR_WORKER_MEMORY": "2GiB",
			"SQUALL_SUPERVISOR_WORKER_OPEN_FILES": "1024", "SQUALL_SUPERVISOR_WORKER_PIDS": "50",
			"SQUALL_SUPERVISOR_WORKER_CGROUP_PARENT": "/sys/fs/cgroup/x"},
			supervisor.Isolation{RunAs: &supervisor.RunAs{Name: "root"}, MemoryBytes: 2 << 30, OpenFiles: 1024, Pids: 50,
				CgroupParent: "/sys/fs/cgroup/x"}},
		// The general variable, and the command line winning over it.
		{[]string{"--worker-memory", "1G"}, map[string]string{"SQUALL_WORKER_MEMORY": "64M"},
			supervisor.Isolation{MemoryBytes: 1 << 30}},
		{nil, map[string]string{"SQUALL_WORKER_MEMORY": "64M"}, supervisor.Isolation{MemoryBytes: 64 << 20}},
	} {
		p, _ := program(t, tc.env)
		fs := newFlagSetForTest()
		var e etcdFlags
		var sf supervisorFlags
		e.register(fs)
		sf.register(fs, "d")
		if _, err := parse(p, fs, "supervisor", append([]string{"--listen", ""}, tc.args...), 0); err != nil {
			t.Fatal(err)
		}
		cfg, err := sf.config(&e)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.args, tc.env, err)
		}
		got := cfg.Isolation
		if (got.RunAs == nil) != (tc.want.RunAs == nil) || got.RunAs != nil && *got.RunAs != *tc.want.RunAs {
			t.Errorf("%v %v: RunAs %v, want %v", tc.args, tc.env, got.RunAs, tc.want.RunAs)
		}
		got.RunAs, tc.want.RunAs = nil, nil
		if got != tc.want {
			t.Errorf("%v %v: Isolation %+v, want %+v", tc.args, tc.env, got, tc.want)
		}
	}
}

func TestSupervisorIsolationUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--worker-memory", "lots"}, nil, "bad size"},
		{nil, map[string]string{"SQUALL_SUPERVISOR_WORKER_MEMORY": "2 PiB"}, "SQUALL_SUPERVISOR_WORKER_MEMORY"},
		{[]string{"--worker-memory", "512"}, nil, "MemoryBytes 512"}, // bytes, meant MiB
		{[]string{"--worker-open-files", "3"}, nil, "OpenFiles 3"},
		{[]string{"--worker-pids", "-1"}, nil, "Pids -1"},
		{[]string{"--worker-cgroup-parent", "sys/fs/cgroup"}, nil, "not absolute"},
		{[]string{"--worker-user", "no-such-user-here"}, nil, "--worker-user"},
		{[]string{"--worker-user", "root:"}, nil, "want user or user:group"},
	} {
		p, out := program(t, tc.env)
		args := append([]string{"supervisor", "--listen", ""}, tc.args...)
		if code := Run(context.Background(), p, args); code != ExitUsage || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v %v: exit %d, output %q; want exit %d and %q", tc.args, tc.env, code, out.String(), ExitUsage, tc.want)
		}
	}
}
