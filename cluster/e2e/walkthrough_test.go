package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/nimbus"
	"github.com/squallstream/squall/internal/proctest"
	"github.com/squallstream/squall/internal/testenv"
)

// walkthroughTimeout bounds the whole walkthrough: builds, three etcd
// members, five daemons, a submit, an upgrade, a kill and the stop (about
// 1.5 minutes on the 2-core test machine under load).
const walkthroughTimeout = 6 * time.Minute

// The tools the walkthrough's commands use besides the programs it builds.
var walkthroughTools = []string{"bash", "go", "curl", "pgrep", "awk", "grep", "sha256sum", "base64", "mktemp", "head", "cut", "sort", "wc"}

// TestWalkthrough runs the production walkthrough of docs/cluster.md: the
// ```sh blocks between its markers, in order, in one bash process with
// `set -euo pipefail`, from the repository's root, with TMPDIR a
// directory of the test's (the walkthrough's mktemp -d makes its WORK
// there). The blocks start the daemons themselves (three etcd members
// with TLS, two nimbuses and three supervisors on loopback) and stop them
// at the end; the test checks what they printed — the cluster view, the
// submits, `list` (committing on two workers, then on the upgraded
// artifact, then empty after the kill), the workers' processes — and
// that no process of the walkthrough is left. Whatever happens, it kills
// every process whose command line names its directory.
func TestWalkthrough(t *testing.T) {
	for _, tool := range walkthroughTools {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, fmt.Sprintf("the walkthrough of docs/cluster.md needs %s on PATH: %v", tool, err))
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "cluster.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := walkthroughBlocks(string(doc))
	if err != nil {
		t.Fatalf("docs/cluster.md: %v", err)
	}
	requireFreePorts(t, blocks)

	dir := t.TempDir()
	script := filepath.Join(dir, "walkthrough.sh")
	if err := os.WriteFile(script, []byte(walkthroughScript(root, blocks)), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	t.Cleanup(func() { // runs after the kill below, before dir is removed
		if t.Failed() {
			logWalkthrough(t, dir, stdout.String(), stderr.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), walkthroughTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	cmd.Env = walkthroughEnv(os.Environ(), dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second // a daemon left holding the output must not hang the test
	t.Cleanup(func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		if left := killUnder(dir); len(left) > 0 {
			t.Errorf("processes still alive after SIGKILL: %v", left)
		}
	})
	start := time.Now()
	err = cmd.Run()
	t.Logf("the walkthrough ran in %v", time.Since(start).Round(time.Second))
	if ctx.Err() != nil {
		t.Fatalf("the walkthrough did not finish within %v", walkthroughTimeout)
	}
	if err != nil {
		t.Fatalf("the walkthrough failed: %v", err)
	}
	if left := processesUnder(dir); len(left) > 0 {
		t.Errorf("the walkthrough's stop left processes running:\n%s", strings.Join(slices.Collect(maps.Values(left)), "\n"))
	}
	checkWalkthroughOutput(t, dir, stdout.String())
}

// missing skips the test, or fails it under CI.
func missing(t *testing.T, msg string) {
	t.Helper()
	if testenv.InCI() {
		t.Fatal(msg + " (CI is set, so this fails the test instead of skipping it)")
	}
	t.Skip(msg)
}

// walkthroughScript is the script bash runs: the blocks, each announced
// on standard error, and a trap naming the command that failed.
func walkthroughScript(root string, blocks []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "set -euo pipefail\ncd %q\n", root)
	b.WriteString("trap 'echo \"[walkthrough] failed (status $?) at line $LINENO: $BASH_COMMAND\" >&2' ERR\n")
	for i, block := range blocks {
		fmt.Fprintf(&b, "echo '[walkthrough] block %d of %d' >&2\n%s", i+1, len(blocks), block)
	}
	b.WriteString("echo '[walkthrough] done' >&2\n")
	return b.String()
}

// walkthroughEnv is the test's environment without the cluster's
// variables (the walkthrough sets its own) and with TMPDIR set to dir.
func walkthroughEnv(environ []string, dir string) []string {
	env := slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, "SQUALL_") || strings.HasPrefix(kv, "TMPDIR=")
	})
	return append(env, "TMPDIR="+dir)
}

// requireFreePorts fails the test if a host the walkthrough sets is not
// 127.0.0.1 (tests use loopback only), or if a port it gives a host
// ($X_HOST:port) or a supervisor's workers is taken: its ports are fixed,
// as on real hosts. A supervisor's X_SLOT=P is its first slot of two,
// whose workers listen at P and P+1 and their monitors 1000 above (the
// default --monitor-port-offset).
func requireFreePorts(t *testing.T, blocks []string) {
	t.Helper()
	text := strings.Join(blocks, "\n")
	hosts := regexp.MustCompile(`\b([A-Z0-9_]+_HOST)=(\S+)`).FindAllStringSubmatch(text, -1)
	if len(hosts) == 0 {
		t.Fatal("the walkthrough sets no host (…_HOST=)")
	}
	for _, m := range hosts {
		if m[2] != "127.0.0.1" {
			t.Fatalf("the walkthrough sets %s=%s: on one machine every host must be 127.0.0.1", m[1], m[2])
		}
	}
	ports := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:127\.0\.0\.1|_HOST):(\d+)`).FindAllStringSubmatch(text, -1) {
		ports[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`\b[A-Z0-9_]+_SLOT=(\d+)`).FindAllStringSubmatch(text, -1) {
		first, _ := strconv.Atoi(m[1])
		for _, p := range []int{first, first + 1, first + 1000, first + 1001} {
			ports[strconv.Itoa(p)] = true
		}
	}
	if len(ports) == 0 {
		t.Fatal("the walkthrough names no port")
	}
	for _, p := range slices.Sorted(maps.Keys(ports)) {
		ln, err := net.Listen("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Fatalf("port %s, which the walkthrough uses, is not free (another run of it?): %v", p, err)
		}
		ln.Close()
	}
}

// processesUnder returns the live processes whose command line names dir
// (pid → command line).
func processesUnder(dir string) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(dir)) && alive(pid) {
			out[pid] = strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
		}
	}
	return out
}

// killUnder kills every process whose command line names dir and waits
// (up to 10 s) for them to go; it returns those still alive.
func killUnder(dir string) map[int]string {
	left := processesUnder(dir)
	for pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	eventually(10*time.Second, func() bool {
		left = processesUnder(dir)
		return len(left) == 0
	})
	return left
}

// workDir is the walkthrough's $WORK: the one directory its mktemp -d
// made under dir.
func workDir(t *testing.T, dir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "tmp.*"))
	if len(m) != 1 {
		t.Fatalf("want one mktemp directory (the walkthrough's $WORK) in %s, found %v", dir, m)
	}
	return m[0]
}

// checkWalkthroughOutput checks what the walkthrough printed against
// what docs/cluster.md says it shows.
func checkWalkthroughOutput(t *testing.T, dir, out string) {
	t.Helper()
	work := workDir(t, dir)
	for _, want := range []string{
		"etcd authentication on for /squall: users root, squall-nimbus, squall-supervisor",
		"<title>squall cluster</title>",
		`squall_cluster_workers{state="running",topology="wordcount"} 2`,
		"killed wordcount",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the walkthrough did not print %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^403$`).MatchString(out) {
		t.Error("the DELETE without a certificate was not answered 403")
	}
	checkClusterView(t, out)

	// The two submits: two builds of the program, in $WORK/bin.
	arts := submitted(out, "wordcount")
	if len(arts) != 2 || arts[0] == arts[1] {
		t.Fatalf("want two submits of two artifacts, got %v", arts)
	}
	built := binaries(t, filepath.Join(work, "bin"))
	for _, a := range arts {
		if built[a] == "" {
			t.Errorf("the artifact %s submitted is none of the binaries built: %v", a, built)
		}
	}
	v1, v2 := arts[0], arts[1]

	tables, err := listTables(out)
	if err != nil {
		t.Fatal(err)
	}
	var rows []listRow // the rows of wordcount, in order
	for _, tb := range tables {
		for _, r := range tb {
			if r.name == "wordcount" {
				rows = append(rows, r)
			}
		}
	}
	if len(rows) < 2 || len(tables) < 3 {
		t.Fatalf("want list to show wordcount before and after the upgrade, then an empty list; got %d tables, wordcount rows %+v", len(tables), rows)
	}
	before, after := rows[0], rows[len(rows)-1]
	checkRow(t, "after the submit", before, v1, 0)
	checkRow(t, "after the upgrade", after, v2, before.committed)
	for slot, pid := range after.running {
		if slices.Contains(slices.Collect(maps.Values(before.running)), pid) {
			t.Errorf("after the upgrade, the worker of %s is still pid %d, the old version's", slot, pid)
		}
	}
	if last := tables[len(tables)-1]; len(last) != 0 {
		t.Errorf("list after the kill shows %+v, want no topology", last)
	}

	// The workers pgrep showed run from the artifacts, with the pids list
	// reported, listening at their slots' ports.
	ws := pgrepWorkers(out)
	byArtifact := map[string][]int{}
	for _, w := range ws {
		byArtifact[w.artifact] = append(byArtifact[w.artifact], w.pid)
		if w.slot == 0 || w.listen != w.slot {
			t.Errorf("worker pid %d of slot %d listens on port %d, want its slot's (--fixed-ports)", w.pid, w.slot, w.listen)
		}
	}
	if len(byArtifact) != 2 {
		t.Errorf("pgrep showed workers of %d artifacts, want 2 (before and after the upgrade): %+v", len(byArtifact), ws)
	}
	for _, c := range []struct {
		art string
		row listRow
	}{{v1, before}, {v2, after}} {
		got := slices.Sorted(slices.Values(byArtifact[c.art]))
		want := slices.Sorted(maps.Values(c.row.running))
		if !slices.Equal(got, want) {
			t.Errorf("pgrep showed the workers of %.12s as pids %v; list showed %v", c.art, got, want)
		}
	}
}

// checkRow checks a list row of wordcount: active, two workers on two
// supervisors, running, committed past minCommitted, of the artifact.
func checkRow(t *testing.T, when string, r listRow, artifact string, minCommitted int64) {
	t.Helper()
	sups := map[string]bool{}
	for _, s := range r.assigned {
		sup, _, _ := strings.Cut(s, ":")
		sups[sup] = true
		if _, ok := r.running[s]; !ok {
			t.Errorf("%s: slot %s assigned but no worker running there: %+v", when, s, r)
		}
	}
	switch {
	case r.status != "active" || r.workers != 2:
		t.Errorf("%s: list shows %+v, want wordcount active with 2 workers", when, r)
	case len(r.assigned) != 2 || len(sups) != 2 || len(r.running) != 2:
		t.Errorf("%s: list shows %+v, want two slots on two supervisors, each running a worker", when, r)
	case r.committed <= minCommitted:
		t.Errorf("%s: list shows committed txid %d, want more than %d", when, r.committed, minCommitted)
	case !strings.HasPrefix(artifact, r.artifact) || len(r.artifact) != 12:
		t.Errorf("%s: list shows artifact %s, want %.12s", when, r.artifact, artifact)
	}
}

// checkClusterView checks the first /api/v1/cluster answer printed: a
// leader, two nimbuses, three supervisors of two slots.
func checkClusterView(t *testing.T, out string) {
	t.Helper()
	line := regexp.MustCompile(`(?m)^\{"nimbus":.*$`).FindString(out)
	var c nimbus.ClusterInfo
	if err := json.Unmarshal([]byte(line), &c); err != nil {
		t.Errorf("no cluster view (GET /api/v1/cluster) in the output: %v", err)
		return
	}
	var ids []string
	for _, s := range c.Supervisors {
		ids = append(ids, s.ID)
		if len(s.Slots) != 2 {
			t.Errorf("supervisor %s has slots %+v, want 2", s.ID, s.Slots)
		}
	}
	if len(c.Nimbuses) != 2 || !slices.Contains(c.Nimbuses, c.Leader) ||
		!slices.Equal(ids, []string{"supervisor1", "supervisor2", "supervisor3"}) {
		t.Errorf("cluster view %+v: want a leader among two nimbuses and supervisors 1 to 3", c)
	}
}

// binaries returns the sha256 of each file in dir (digest → name).
func binaries(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[hex.EncodeToString(h.Sum(nil))] = e.Name()
	}
	return out
}

// logWalkthrough logs the ends of the walkthrough's output and of every
// log it left (daemons' and workers').
func logWalkthrough(t *testing.T, dir, stdout, stderr string) {
	t.Logf("---- walkthrough standard output:\n%s", proctest.Tail(stdout, 60))
	t.Logf("---- walkthrough standard error:\n%s", proctest.Tail(stderr, 60))
	var logs []string
	for _, pattern := range []string{"tmp.*/logs/*", "tmp.*/supervisor*/workers/*/worker.*"} {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		logs = append(logs, m...)
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Logf("---- %s: %v", l, err)
			continue
		}
		if len(b) > 0 {
			t.Logf("---- %s:\n%s", l, proctest.Tail(string(b), 30))
		}
	}
}
