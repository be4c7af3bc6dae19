package docscheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSlugGitHubRules(t *testing.T) {
	var s Slugger
	cases := []struct{ heading, want string }{
		{"Cluster mode on etcd", "cluster-mode-on-etcd"},
		{"One binary: `squall.Main`", "one-binary-squallmain"},
		{"Stopping and restarting a service (fault injection)", "stopping-and-restarting-a-service-fault-injection"},
		{"TLS: `squall-etcd` and `etcdembed`", "tls-squall-etcd-and-etcdembed"},
		{"Roles (`cluster/etcdauth`)", "roles-clusteretcdauth"},
		{"snake_case and Ünïcode", "snake_case-and-ünïcode"},
		{"Tests", "tests"},
		{"Tests", "tests-1"},
		{"Tests", "tests-2"},
		{"Tests 1", "tests-1-1"},
	}
	for _, c := range cases {
		if got := s.Slug(headingText(c.heading)); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

func TestParseFences(t *testing.T) {
	src := "# Title\n\n```go\nx := 1\n```\n\n~~~\n```\n~~~\n\n```json\n{}\n``` Prose after a fence\nmore\n```\n"
	d := Parse("a.md", src)
	if len(d.Blocks) != 3 {
		t.Fatalf("blocks = %+v, want 3", d.Blocks)
	}
	if b := d.Blocks[0]; b.Lang != "go" || b.Line != 3 || b.Body != "x := 1\n" {
		t.Errorf("first block = %+v", b)
	}
	if b := d.Blocks[1]; b.Body != "```\n" {
		t.Errorf("a ``` inside ~~~ is content: %+v", b)
	}
	if len(d.Problems) != 1 || d.Problems[0].Line != 13 || !strings.Contains(d.Problems[0].Msg, "opened at line 11") {
		t.Errorf("problems = %v, want the fence with text at line 13", d.Problems)
	}

	d = Parse("b.md", "text\n```sh\necho\n")
	if len(d.Problems) != 1 || d.Problems[0].Line != 2 || !strings.Contains(d.Problems[0].Msg, "never closed") {
		t.Errorf("problems = %v, want the unclosed fence of line 2", d.Problems)
	}
}

func TestParseIgnoresCode(t *testing.T) {
	src := "# Real\n\n```sh\n# not a heading\necho [x](missing.md)\n```\n\nSee `[y](missing.md)` and [z](b.md#real).\n"
	d := Parse("a.md", src)
	if !d.Anchors["real"] || d.Anchors["not-a-heading"] {
		t.Errorf("anchors = %v", d.Anchors)
	}
	if len(d.Links) != 1 || d.Links[0].Target != "b.md#real" || d.Links[0].Line != 8 {
		t.Errorf("links = %+v, want only b.md#real at line 8", d.Links)
	}
}

func TestCheckLinks(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":            {Data: []byte("[ok](docs/a.md#fencing-a-stale-worker) [dir](docs) [img](docs/images/x.svg) [web](https://example.com/nope.md)\n[gone](docs/gone.md)\n")},
		"docs/a.md":            {Data: []byte("# A\n## Fencing: a stale worker\n[self](#a) [bad](#nope) [up](../README.md) [out](../../x.md)\n[ext](../examples/e/README.md#run) [extbad](../examples/e/README.md#walk)\n(docs/a.md, \"Fencing\") and (a.md, \"No such\n section\")\n")},
		"docs/images/x.svg":    {Data: []byte("<svg/>")},
		"examples/e/README.md": {Data: []byte("# Run\n")},
	}
	docs, err := Load(fsys, []string{"README.md", "docs/a.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range CheckLinks(fsys, docs) {
		got = append(got, f.String())
	}
	want := []string{
		`README.md:2: link "docs/gone.md": no file docs/gone.md`,
		`docs/a.md:3: link "#nope": docs/a.md has no heading with anchor #nope`,
		`docs/a.md:3: link "../../x.md" leaves the repository`,
		`docs/a.md:4: link "../examples/e/README.md#walk": examples/e/README.md has no heading with anchor #walk`,
		`docs/a.md:5: cites a.md, "No such section": no such heading there`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCheckGoSyntax(t *testing.T) {
	good := []string{
		"package main\n\nfunc main() {}\n",
		"x := f()\nif x {\n\treturn\n}\n",
		"func F() {}\ntype T struct{}\n",
		"Name string\nVerifyPeer func() error\n",
		"{name: \"a\", kind: 1},\n",
		"type T struct{}\n\nt := T{}\n_ = t\n",
		"b.Spout(\"s\", ...)\n...\nt.Cleanup(func() { ... delete topic ... })\n",
	}
	bad := []string{
		"package main\n\nfunc main() {\n",
		"x := := 1\n",
		"func F() {\n```\n",
	}
	check := func(body string) []Finding {
		return CheckGoSyntax([]Snippet{{File: "a.md", Block: Block{Line: 1, Lang: "go", Body: body}}})
	}
	for _, b := range good {
		if f := check(b); len(f) != 0 {
			t.Errorf("%q: %v", b, f)
		}
	}
	for _, b := range bad {
		if f := check(b); len(f) != 1 {
			t.Errorf("%q parsed, want a finding", b)
		}
	}
}

func TestCompileGoReportsTheDocLine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs go vet")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	snippets := []Snippet{
		{File: "docs/ok.md", Block: Block{Line: 3, Lang: "go", Body: "package main\n\nimport \"github.com/squallstream/squall/txn\"\n\nfunc main() { _ = txn.TxID(1) }\n"}},
		{File: "docs/fragment.md", Block: Block{Line: 1, Lang: "go", Body: "this is not compiled\n"}},
		{File: "docs/bad.md", Block: Block{Line: 10, Lang: "go", Body: "package main\n\nfunc main() {\n\tvar n int = \"s\"\n\t_ = n\n}\n"}},
	}
	err = CompileGo(t.Context(), goBin, repoRoot(t), t.TempDir(), snippets)
	if err == nil || !strings.Contains(err.Error(), "docs/bad.md:14") {
		t.Fatalf("CompileGo = %v, want an error at docs/bad.md:14", err)
	}
	if strings.Contains(err.Error(), "docs/ok.md") {
		t.Errorf("the good snippet was reported: %v", err)
	}
	if err := CompileGo(t.Context(), goBin, repoRoot(t), t.TempDir(), snippets[:2]); err != nil {
		t.Errorf("CompileGo of a good snippet: %v", err)
	}
}
