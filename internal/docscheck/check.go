package docscheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"strings"
)

// Load parses the Markdown files named by files (slash paths in fsys).
func Load(fsys fs.FS, files []string) (map[string]Doc, error) {
	docs := make(map[string]Doc, len(files))
	for _, f := range files {
		src, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("docscheck: %w", err)
		}
		docs[f] = Parse(f, string(src))
	}
	return docs, nil
}

// CheckLinks returns the fence problems of docs and every relative link
// in them whose file is missing from fsys, or whose #anchor names no
// heading of its Markdown file. Links with a scheme (https:, mailto:) are
// not followed. A link to a Markdown file outside docs is parsed from fsys
// for its anchors.
func CheckLinks(fsys fs.FS, docs map[string]Doc) []Finding {
	var out []Finding
	others := make(map[string]Doc)
	lookup := func(p string) (Doc, bool) {
		if d, ok := docs[p]; ok {
			return d, true
		}
		if d, ok := others[p]; ok {
			return d, true
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return Doc{}, false
		}
		d := Parse(p, string(src))
		others[p] = d
		return d, true
	}
	for _, file := range sortedKeys(docs) {
		d := docs[file]
		out = append(out, d.Problems...)
		for _, l := range d.Links {
			if msg := checkLink(fsys, file, l.Target, lookup); msg != "" {
				out = append(out, Finding{file, l.Line, msg})
			}
		}
		for _, c := range d.Citations {
			if msg := checkCitation(file, c, lookup); msg != "" {
				out = append(out, Finding{file, c.Line, msg})
			}
		}
	}
	return out
}

// checkLink returns what is wrong with target, a link in file, or "".
func checkLink(fsys fs.FS, file, target string, lookup func(string) (Doc, bool)) string {
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return ""
	}
	p, anchor, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Sprintf("link %q: %v", target, err)
	}
	dest := file
	switch {
	case p == "":
	case strings.HasPrefix(p, "/"):
		dest = path.Clean(strings.TrimPrefix(p, "/"))
	default:
		dest = path.Join(path.Dir(file), p)
	}
	if strings.HasPrefix(dest, "../") || dest == ".." {
		return fmt.Sprintf("link %q leaves the repository", target)
	}
	if _, err := fs.Stat(fsys, dest); err != nil {
		return fmt.Sprintf("link %q: no file %s", target, dest)
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	d, ok := lookup(dest)
	if !ok {
		return fmt.Sprintf("link %q: cannot read %s", target, dest)
	}
	if !d.Anchors[anchor] {
		return fmt.Sprintf("link %q: %s has no heading with anchor #%s", target, dest, anchor)
	}
	return ""
}

// checkCitation returns what is wrong with c, a section cited in file's
// prose, or "". The section matches a heading whose text is the same or
// begins with it and a colon ("Fencing" cites "Fencing: a stale worker
// cannot ..."), compared as slugs (case and punctuation aside). The cited file is looked up beside file, then from the
// repository root (docs/x.md cited from docs/y.md).
func checkCitation(file string, c Citation, lookup func(string) (Doc, bool)) string {
	d, ok := lookup(path.Join(path.Dir(file), c.File))
	if !ok {
		if d, ok = lookup(path.Clean(c.File)); !ok {
			return fmt.Sprintf("cites %s, \"%s\": no file %s", c.File, c.Section, c.File)
		}
	}
	want := slugify(headingText(c.Section))
	for _, h := range d.Headings {
		title, _, _ := strings.Cut(h, ":")
		if slugify(h) == want || slugify(title) == want {
			return ""
		}
	}
	return fmt.Sprintf("cites %s, \"%s\": no such heading there", c.File, c.Section)
}
