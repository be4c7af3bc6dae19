package docscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the repository root %s: %v", root, err)
	}
	return root
}

// docFiles lists README.md and docs/*.md as slash paths.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	matches, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		files = append(files, "docs/"+filepath.Base(m))
	}
	return files
}

// TestRepositoryDocs runs every check on README.md and docs/*.md: links and
// anchors, fences, Go fragments parse, complete Go snippets compile
// (docs/testing.md, "The docs check").
func TestRepositoryDocs(t *testing.T) {
	root := repoRoot(t)
	fsys := os.DirFS(root)
	docs, err := Load(fsys, docFiles(t, root))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range CheckLinks(fsys, docs) {
		t.Error(f)
	}
	snippets := GoSnippets(docs)
	for _, f := range CheckGoSyntax(snippets) {
		t.Error(f)
	}
	complete := 0
	for _, s := range snippets {
		if s.Complete() {
			complete++
		}
	}
	t.Logf("%d files, %d Go snippets, %d complete", len(docs), len(snippets), complete)
	if testing.Short() {
		t.Skip("-short: the complete Go snippets are not compiled")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	if err := CompileGo(t.Context(), goBin, root, t.TempDir(), snippets); err != nil {
		t.Error(strings.TrimSpace(err.Error()))
	}
}
