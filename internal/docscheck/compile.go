package docscheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Module is the import path of the module whose docs are checked.
const Module = "github.com/squallstream/squall"

var requireBlock = regexp.MustCompile(`(?s)\nrequire \(.*?\n\)|\nrequire [^\n(]+`)

// CompileGo writes every complete snippet into its own package of a
// temporary module under tmp and runs `go vet ./...` there with the go
// command goBin. The module requires what the repository at root requires
// (its go.mod's require lines and its go.sum) and replaces Module with
// root, so the snippets compile against the repository as it is, offline
// from the module cache. Each file starts with a //line directive, so an
// error names the Markdown file and line of the snippet. The returned
// error holds go vet's output.
func CompileGo(ctx context.Context, goBin, root, tmp string, snippets []Snippet) error {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return fmt.Errorf("docscheck: %w", err)
	}
	gosum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return fmt.Errorf("docscheck: %w", err)
	}
	var mod strings.Builder
	fmt.Fprintf(&mod, "module squall.invalid/docsnippets\n\ngo 1.26.0\n\nrequire %s v0.0.0\n\nreplace %s => %s\n", Module, Module, root)
	for _, r := range requireBlock.FindAllString(string(gomod), -1) {
		mod.WriteString(r)
		mod.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(mod.String()), 0o644); err != nil {
		return fmt.Errorf("docscheck: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.sum"), gosum, 0o644); err != nil {
		return fmt.Errorf("docscheck: %w", err)
	}
	n := 0
	for _, s := range snippets {
		if !s.Complete() {
			continue
		}
		n++
		dir := filepath.Join(tmp, fmt.Sprintf("s%03d", n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("docscheck: %w", err)
		}
		src := fmt.Sprintf("//line %s:%d\n%s", s.File, s.Block.Line+1, s.Block.Body)
		if err := os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(src), 0o644); err != nil {
			return fmt.Errorf("docscheck: %w", err)
		}
	}
	if n == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, goBin, "vet", "./...")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("docscheck: go vet of the complete Go snippets: %v\n%s", err, out.String())
	}
	return nil
}
