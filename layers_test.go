package squall_test

import (
	"os/exec"
	"strings"
	"testing"
)

// layers ranks squall's top-level folders: a package may import packages
// of its own folder and of folders of a lower rank, never of a higher one
// (docs/concepts.md, "Where things live"). Test files may reach up (a test
// of state/cassandra may run a trident topology); production code may not.
var layers = map[string]int{
	"acker": 0, "txn": 0, "failure": 0, "internal": 0,
	"transport": 1, "state": 1, "drpc": 1,
	"topology": 2,
	"trident":  3,
	"ops":      4, "spouts": 4, "monitor": 4,
	"cluster":  5,
	"examples": 6, "cmd": 6, "bench": 6, "": 6, // "" is the module root
}

const module = "github.com/squallstream/squall"

// folder returns the top-level folder of a package of this module, and
// false for a package outside it.
func folder(importPath string) (string, bool) {
	if importPath == module {
		return "", true
	}
	rest, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return "", false
	}
	top, _, _ := strings.Cut(rest, "/")
	return top, true
}

// upwardImports returns the imports in edges (package → its imports)
// that run up a layer, or that involve a folder missing from ranks.
func upwardImports(edges map[string][]string, ranks map[string]int) []string {
	var bad []string
	for pkg, imports := range edges {
		from, ok := folder(pkg)
		if !ok {
			continue
		}
		fromRank, known := ranks[from]
		if !known {
			bad = append(bad, pkg+": folder "+from+" has no layer")
			continue
		}
		for _, imp := range imports {
			to, ok := folder(imp)
			if !ok || to == from {
				continue
			}
			if toRank, known := ranks[to]; !known || toRank > fromRank {
				bad = append(bad, pkg+" imports "+imp)
			}
		}
	}
	return bad
}

func TestUpwardImportsAreFound(t *testing.T) {
	edges := map[string][]string{
		module + "/state/x":        {module + "/trident", "fmt"},
		module + "/trident":        {module + "/state", module + "/trident/internal/plan"},
		module + "/cluster/worker": {module + "/trident"},
		module + "/newfolder":      {},
	}
	got := upwardImports(edges, layers)
	want := map[string]bool{
		module + "/state/x imports " + module + "/trident":   true,
		module + "/newfolder: folder newfolder has no layer": true,
	}
	if len(got) != len(want) {
		t.Fatalf("found %q, want %d findings", got, len(want))
	}
	for _, g := range got {
		if !want[g] {
			t.Fatalf("unexpected finding %q (all %q)", g, got)
		}
	}
}

// TestNoImportRunsUpALayer checks the module's own packages (not their
// tests) with go list. A program (package main) sits at the top wherever
// its folder is: cluster/internal/testprog is a squall program.
func TestNoImportRunsUpALayer(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages: %v", err)
	}
	out, err := exec.Command(goCmd, "list", "-f", `{{if ne .Name "main"}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	edges := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			edges[fields[0]] = fields[1:]
		}
	}
	if len(edges) < 40 {
		t.Fatalf("go list found only %d packages", len(edges))
	}
	for _, b := range upwardImports(edges, layers) {
		t.Error(b)
	}
}
