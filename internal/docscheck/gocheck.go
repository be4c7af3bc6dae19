package docscheck

import (
	"errors"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strings"
)

// Snippet is one Go code block of a file.
type Snippet struct {
	File  string
	Block Block
}

// Complete reports whether the snippet is a whole Go file: its first line
// that is neither blank nor a comment starts with "package ". Complete
// snippets are compiled by [CompileGo]; the others are fragments, which
// only have to parse.
func (s Snippet) Complete() bool {
	for _, line := range strings.Split(s.Block.Body, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "//") {
			continue
		}
		return strings.HasPrefix(t, "package ")
	}
	return false
}

// GoSnippets returns the blocks of docs whose language is go, ordered by
// file and line.
func GoSnippets(docs map[string]Doc) []Snippet {
	var out []Snippet
	for _, f := range sortedKeys(docs) {
		for _, b := range docs[f].Blocks {
			if b.Lang == "go" {
				out = append(out, Snippet{f, b})
			}
		}
	}
	return out
}

// CheckGoSyntax returns a finding for every snippet that does not parse: a
// complete snippet as a Go file, a fragment either as top-level
// declarations or as statements of a function body. Fragments may elide
// code with "…" or "...", which stands for whatever fits there: a
// statement, an expression or a field list.
func CheckGoSyntax(snippets []Snippet) []Finding {
	var out []Finding
	for _, s := range snippets {
		if err := parseSnippet(s); err != nil {
			out = append(out, Finding{s.File, s.Block.Line, "go snippet does not parse: " + err.Error()})
		}
	}
	return out
}

// fragmentForms are the ways a fragment may parse: each wraps the
// fragment's text into a Go file.
var fragmentForms = []struct {
	name string
	wrap func(body string) string
}{
	{"declarations", func(b string) string { return "package p\n" + b }},
	{"statements", func(b string) string { return "package p\nfunc _() {\n" + b + "\n}" }},
	{"struct fields", func(b string) string { return "package p\ntype _ struct {\n" + b + "\n}" }},
	{"composite literal elements", func(b string) string { return "package p\nvar _ = T{\n" + b + "\n}" }},
}

// parseSnippet parses s as described at CheckGoSyntax.
func parseSnippet(s Snippet) error {
	parse := func(src string) error {
		_, err := parser.ParseFile(token.NewFileSet(), "snippet.go", src, parser.SkipObjectResolution)
		return err
	}
	if s.Complete() {
		return parse(s.Block.Body)
	}
	body := elide(s.Block.Body)
	var errs []string
	for _, f := range fragmentForms {
		err := parse(f.wrap(body))
		if err == nil {
			return nil
		}
		errs = append(errs, "as "+f.name+": "+firstLine(err))
	}
	// declarations, then statements from an unindented line on
	lines := strings.Split(body, "\n")
	for k := 1; k < len(lines); k++ {
		if lines[k] == "" || lines[k][0] == ' ' || lines[k][0] == '\t' || lines[k][0] == '}' {
			continue
		}
		decls, stmts := strings.Join(lines[:k], "\n"), strings.Join(lines[k:], "\n")
		if parse("package p\n"+decls) == nil && parse("package p\nfunc _() {\n"+stmts+"\n}") == nil {
			return nil
		}
	}
	return errors.New(strings.Join(errs, "; "))
}

// elide replaces the elisions a fragment may use with Go that parses in
// their places: a "..." or "…" alone on a line is a statement, inside an
// expression it is an identifier.
func elide(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "..." || t == "…" || (strings.HasPrefix(t, "...") && strings.HasSuffix(t, "...")) {
			lines[i] = "_ = 0"
			continue
		}
		l = inlineElision.ReplaceAllString(l, "_x")
		l = strings.ReplaceAll(l, "…", "_x")
		l = strings.ReplaceAll(l, "{ ... }", "{ _x }")
		l = strings.ReplaceAll(l, "(...)", "(_x)")
		l = strings.ReplaceAll(l, ": ...", ": _x")
		l = strings.ReplaceAll(l, "= ...", "= _x")
		l = strings.ReplaceAll(l, ", ...", ", _x")
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// inlineElision is prose between two elisions, "... delete topic ...".
var inlineElision = regexp.MustCompile(`\.\.\. [^.]+ \.\.\.`)

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
