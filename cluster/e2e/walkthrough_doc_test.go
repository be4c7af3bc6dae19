package e2e

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The markers around the walkthrough of docs/cluster.md: every fenced
// block between them is a ```sh block, and TestWalkthrough runs them all.
const (
	walkthroughStart = "<!-- walkthrough:start -->"
	walkthroughEnd   = "<!-- walkthrough:end -->"
)

// walkthroughBlocks returns the shell blocks between the markers, in
// order. A fenced block of another kind between the markers is an error:
// nothing the walkthrough shows may escape the test.
func walkthroughBlocks(doc string) ([]string, error) {
	_, rest, ok := strings.Cut(doc, walkthroughStart)
	if !ok {
		return nil, fmt.Errorf("no %s marker", walkthroughStart)
	}
	body, _, ok := strings.Cut(rest, walkthroughEnd)
	if !ok {
		return nil, fmt.Errorf("no %s marker after %s", walkthroughEnd, walkthroughStart)
	}
	if strings.Contains(body, walkthroughStart) {
		return nil, errors.New("two walkthrough:start markers")
	}
	var blocks []string
	var cur []string
	in := false
	for i, line := range strings.Split(body, "\n") {
		fence := strings.HasPrefix(strings.TrimSpace(line), "```")
		switch {
		case !in && fence:
			if info := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "```")); info != "sh" {
				return nil, fmt.Errorf("walkthrough line %d: a fenced block %q between the markers: only ```sh blocks, which the test runs", i+1, line)
			}
			if line != "```sh" {
				return nil, fmt.Errorf("walkthrough line %d: an indented fence %q (write ```sh at the start of the line)", i+1, line)
			}
			in, cur = true, nil
		case in && fence:
			if line != "```" {
				return nil, fmt.Errorf("walkthrough line %d: the block ends with %q, want ```", i+1, line)
			}
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			in = false
		case in:
			cur = append(cur, line)
		}
	}
	if in {
		return nil, errors.New("a ```sh block is not closed before the end marker")
	}
	if len(blocks) == 0 {
		return nil, errors.New("no ```sh block between the markers")
	}
	return blocks, nil
}

func TestWalkthroughBlocks(t *testing.T) {
	doc := "intro\n```sh\nnot run\n```\n" + walkthroughStart + "\ntext\n```sh\necho a\necho b\n```\nmore\n```sh\necho c\n```\n" +
		walkthroughEnd + "\n```sh\nnot run either\n```\n"
	got, err := walkthroughBlocks(doc)
	if err != nil || !slices.Equal(got, []string{"echo a\necho b\n", "echo c\n"}) {
		t.Fatalf("walkthroughBlocks = %q, %v", got, err)
	}
	for name, doc := range map[string]string{
		"no start":        "```sh\necho a\n```\n" + walkthroughEnd,
		"no end":          walkthroughStart + "\n```sh\necho a\n```\n",
		"no block":        walkthroughStart + "\ntext\n" + walkthroughEnd,
		"another fence":   walkthroughStart + "\n```\necho shown, not run\n```\n" + walkthroughEnd,
		"bash fence":      walkthroughStart + "\n```bash\necho shown, not run\n```\n" + walkthroughEnd,
		"indented fence":  walkthroughStart + "\n  ```sh\necho a\n  ```\n" + walkthroughEnd,
		"unclosed":        walkthroughStart + "\n```sh\necho a\n" + walkthroughEnd,
		"two starts":      walkthroughStart + "\n" + walkthroughStart + "\n```sh\necho a\n```\n" + walkthroughEnd,
		"tilde not fence": walkthroughStart + "\n```sh\necho a\n```\n```text\nb\n```\n" + walkthroughEnd,
	} {
		if got, err := walkthroughBlocks(doc); err == nil {
			t.Errorf("%s: walkthroughBlocks = %q, want an error", name, got)
		}
	}
}

// listRow is a row of `list`'s table.
type listRow struct {
	name, status string
	workers      int
	assigned     []string // slots
	running      map[string]int
	committed    int64 // -1: "-"
	artifact     string
}

var (
	listHeader = regexp.MustCompile(`^NAME\s+STATUS\s+WORKERS\s+ASSIGNED\s+RUNNING\s+COMMITTED\s+CRASHES\s+ERRORS\s+ARTIFACT\s*$`)
	listLine   = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(.+?)\s+(\d+|-)\s+(\d+)\s+(\d+)\s+([0-9a-f]{1,12})\s*$`)
	running    = regexp.MustCompile(`^(\S+?)\(pid (\d+)\)$`)
)

// listTables parses every `list` table in out, in order.
func listTables(out string) ([][]listRow, error) {
	var tables [][]listRow
	lines := strings.Split(out, "\n")
	for i := 0; i < len(lines); i++ {
		if !listHeader.MatchString(lines[i]) {
			continue
		}
		table := []listRow{}
		for i+1 < len(lines) {
			m := listLine.FindStringSubmatch(lines[i+1])
			if m == nil {
				break
			}
			i++
			r := listRow{name: m[1], status: m[2], running: map[string]int{}, committed: -1, artifact: m[9]}
			r.workers, _ = strconv.Atoi(m[3])
			if m[4] != "-" {
				r.assigned = strings.Split(m[4], ",")
			}
			if m[5] != "-" {
				for _, w := range strings.Split(m[5], ",") {
					rm := running.FindStringSubmatch(w)
					if rm == nil {
						return nil, fmt.Errorf("list: running worker %q in %q", w, lines[i])
					}
					r.running[rm[1]], _ = strconv.Atoi(rm[2])
				}
			}
			if m[6] != "-" {
				r.committed, _ = strconv.ParseInt(m[6], 10, 64)
			}
			table = append(table, r)
		}
		tables = append(tables, table)
	}
	return tables, nil
}

func TestListTables(t *testing.T) {
	out := "noise\n" +
		"NAME       STATUS  WORKERS  ASSIGNED                           RUNNING                                                COMMITTED  CRASHES  ERRORS  ARTIFACT\n" +
		"wordcount  active  2        supervisor1:6700,supervisor2:6700  supervisor1:6700(pid 8282),supervisor2:6700(pid 8297)  19         0        0       32ce6efb06e8\n" +
		"other      inactive  1      -                                  -                                                      -          3        1       0123456789ab\n" +
		"pgrep output\n" +
		"NAME  STATUS  WORKERS  ASSIGNED  RUNNING  COMMITTED  CRASHES  ERRORS  ARTIFACT\n"
	tables, err := listTables(out)
	if err != nil || len(tables) != 2 || len(tables[0]) != 2 || len(tables[1]) != 0 {
		t.Fatalf("listTables = %+v, %v", tables, err)
	}
	r := tables[0][0]
	if r.name != "wordcount" || r.status != "active" || r.workers != 2 || len(r.assigned) != 2 ||
		r.running["supervisor2:6700"] != 8297 || r.committed != 19 || r.artifact != "32ce6efb06e8" {
		t.Errorf("row = %+v", r)
	}
	if o := tables[0][1]; o.committed != -1 || len(o.running) != 0 || o.assigned != nil {
		t.Errorf("row = %+v", o)
	}
}

// submitted returns the artifacts `submit` reported, in order.
func submitted(out, topology string) []string {
	re := regexp.MustCompile(`(?m)^submitted ` + regexp.QuoteMeta(topology) + `: artifact ([0-9a-f]{64}), `)
	var out2 []string
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		out2 = append(out2, m[1])
	}
	return out2
}

// workerLine is a line of `pgrep -af <dir>/artifacts/`: a worker process.
var (
	workerLine   = regexp.MustCompile(`(?m)^(\d+) \S*/(supervisor\d)/artifacts/([0-9a-f]{64}) worker .*$`)
	workerPort   = regexp.MustCompile(` --port (\d+)`)
	workerListen = regexp.MustCompile(` --listen \S+:(\d+)`)
)

// workerProc is a worker as pgrep showed it.
type workerProc struct {
	pid        int
	supervisor string
	artifact   string
	slot       int // --port
	listen     int // the port of its last --listen (the one it uses)
}

// pgrepWorkers returns the worker lines of out, in order.
func pgrepWorkers(out string) []workerProc {
	var ws []workerProc
	for _, m := range workerLine.FindAllStringSubmatch(out, -1) {
		w := workerProc{supervisor: m[2], artifact: m[3]}
		w.pid, _ = strconv.Atoi(m[1])
		if p := workerPort.FindStringSubmatch(m[0]); p != nil {
			w.slot, _ = strconv.Atoi(p[1])
		}
		if l := workerListen.FindAllStringSubmatch(m[0], -1); l != nil {
			w.listen, _ = strconv.Atoi(l[len(l)-1][1])
		}
		ws = append(ws, w)
	}
	return ws
}

func TestPgrepWorkers(t *testing.T) {
	out := "noise\n1234 /w/supervisor2/artifacts/" + strings.Repeat("ab", 32) + " worker --topology wordcount --supervisor supervisor2 " +
		"--port 22720 --data-dir /w/supervisor2/workers/22720 --listen 127.0.0.1:0 --http 127.0.0.1:0 --listen 127.0.0.1:22720 --http 127.0.0.1:23720\n"
	ws := pgrepWorkers(out)
	want := workerProc{pid: 1234, supervisor: "supervisor2", artifact: strings.Repeat("ab", 32), slot: 22720, listen: 22720}
	if len(ws) != 1 || ws[0] != want {
		t.Fatalf("pgrepWorkers = %+v, want %+v", ws, want)
	}
}
