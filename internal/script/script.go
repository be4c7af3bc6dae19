// Package script runs golden scripts, the tests of squall's pure state
// machines (the batch coordinator, batch completion).
//
// A script is a text file of input lines, each followed by the lines it is
// expected to produce, indented by two spaces. Lines starting with # and
// blank lines are comments. A Driver plays one input line against the
// machine under test and returns what it produced; with update set, Run
// rewrites the scripts with the actual output instead of comparing.
package script

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Driver plays one input line and returns the lines it produced. An error
// is a malformed line, which fails the test at once.
type Driver func(line string) ([]string, error)

// Run runs every file matching pattern (for example "testdata/*.txt") as a
// subtest of t, each with a Driver from newDriver.
func Run(t *testing.T, pattern string, update bool, newDriver func() Driver) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %q: %v", pattern, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runFile(t, f, update, newDriver()) })
	}
}

func runFile(t *testing.T, path string, update bool, play Driver) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); {
		line := lines[i]
		i++
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			out.WriteString(line + "\n")
			continue
		}
		var want []string
		for i < len(lines) && strings.HasPrefix(lines[i], "  ") {
			want = append(want, strings.TrimSpace(lines[i]))
			i++
		}
		got, err := play(line)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", path, i, line, err)
		}
		out.WriteString(line + "\n")
		for _, g := range got {
			out.WriteString("  " + g + "\n")
		}
		if !update && strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: after %q\n got:\n  %s\nwant:\n  %s", path, line,
				strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
	if update {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
