// Package docscheck checks squall's Markdown documentation: relative links
// point to files that exist and anchors to headings that exist (GitHub's
// slug rules), code fences are balanced, and Go snippets parse or, when
// they are complete files, compile.
//
// The core is pure: [Parse] reads one Markdown file into its headings,
// links and code blocks, [Slugger] turns headings into GitHub anchors,
// [CheckLinks] resolves links against a set of parsed files and
// [CheckGoSyntax] parses Go fragments. The shell, [CompileGo], writes the
// complete Go files into a temporary module that replaces the squall module
// with the repository and runs `go vet` on it. The package's test
// (TestRepositoryDocs) runs every check on README.md and docs/*.md, so
// `go test ./...` and CI fail on a broken link, an unbalanced fence or a Go
// snippet that no longer compiles; docs/testing.md states the rules.
package docscheck
