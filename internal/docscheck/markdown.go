package docscheck

import (
	"fmt"
	"regexp"
	"strings"
)

// Doc is one parsed Markdown file.
type Doc struct {
	// Anchors holds the anchor of every heading (and of every HTML
	// element with a name or id attribute).
	Anchors map[string]bool
	// Headings holds the rendered text of every heading, in order.
	Headings []string
	// Links lists the link and image targets outside code, in order.
	Links []Link
	// Blocks lists the fenced code blocks, in order.
	Blocks []Block
	// Citations lists the sections cited in prose, in order.
	Citations []Citation
	// Problems lists what is wrong with the file's fences.
	Problems []Finding
}

// Link is one link or image target.
type Link struct {
	Line   int    // 1-based line of the link
	Target string // as written, such as "cluster.md#leadership-and-fencing"
}

// Citation is a section of a Markdown file cited in prose, as in
// (docs/cluster.md, "Failure behaviour") or (cluster.md, "Logs").
type Citation struct {
	Line    int    // 1-based line where the citation starts
	File    string // as written, such as "docs/cluster.md"
	Section string // the quoted heading text
}

// Block is one fenced code block.
type Block struct {
	Line int    // 1-based line of the opening fence
	Lang string // first word of the info string, such as "go"; "" for none
	Body string // the lines between the fences, each ending in a newline
}

// Finding is one problem, located in a file.
type Finding struct {
	File string // path relative to the repository root, with slashes
	Line int    // 1-based; 0 when it concerns the whole file
	Msg  string
}

// String formats f as file:line: message.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Msg)
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	fenceLine  = regexp.MustCompile("^([ \t]*)(`{3,}|~{3,})(.*)$")
	codeSpan   = regexp.MustCompile("(`+)[^`]*?(?:`+)")
	inlineLink = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	htmlAnchor = regexp.MustCompile(`<[a-zA-Z][^>]*\s(?:name|id)="([^"]+)"`)
	textLink   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
	citation   = regexp.MustCompile(`([\w./-]+\.md),?\s+"([^"]+)"`)
)

// Parse reads one Markdown file. file is used only to locate problems.
func Parse(file, src string) Doc {
	d := Doc{Anchors: make(map[string]bool)}
	var slugs Slugger
	lines := strings.Split(src, "\n")
	var open *Block // the fence being read, if any
	var openMarker string
	var body strings.Builder
	prose := make([]string, len(lines)) // lines outside fences, code spans removed
	for i, line := range lines {
		n := i + 1
		if open != nil {
			m := fenceLine.FindStringSubmatch(line)
			if m != nil && m[2][0] == openMarker[0] && len(m[2]) >= len(openMarker) {
				if strings.TrimSpace(m[3]) == "" {
					open.Body = body.String()
					d.Blocks = append(d.Blocks, *open)
					open = nil
					continue
				}
				d.Problems = append(d.Problems, Finding{file, n, fmt.Sprintf(
					"fence with text %q inside the code block opened at line %d: a closing fence takes no text, so the block stays open",
					strings.TrimSpace(m[3]), open.Line)})
			}
			body.WriteString(line)
			body.WriteByte('\n')
			continue
		}
		if m := fenceLine.FindStringSubmatch(line); m != nil && !(m[2][0] == '`' && strings.Contains(m[3], "`")) {
			lang, _, _ := strings.Cut(strings.TrimSpace(m[3]), " ")
			open = &Block{Line: n, Lang: lang}
			openMarker = m[2]
			body.Reset()
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			d.Anchors[m[1]] = true
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			h := headingText(m[2])
			d.Headings = append(d.Headings, h)
			d.Anchors[slugs.Slug(h)] = true
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			d.Links = append(d.Links, Link{n, m[1]})
			continue
		}
		prose[i] = codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(prose[i], -1) {
			d.Links = append(d.Links, Link{n, strings.Trim(m[1], "<>")})
		}
	}
	if open != nil {
		d.Problems = append(d.Problems, Finding{file, open.Line, "code fence never closed"})
	}
	text := strings.Join(prose, "\n")
	for _, m := range citation.FindAllStringSubmatchIndex(text, -1) {
		d.Citations = append(d.Citations, Citation{
			Line:    1 + strings.Count(text[:m[0]], "\n"),
			File:    text[m[2]:m[3]],
			Section: strings.Join(strings.Fields(text[m[4]:m[5]]), " "),
		})
	}
	return d
}

// headingText is the text GitHub renders for a heading's source: code
// spans keep their content, links their text, emphasis markers and HTML
// tags go.
func headingText(src string) string {
	s := textLink.ReplaceAllString(src, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	s = strings.NewReplacer("`", "", "*", "").Replace(s)
	return strings.TrimSpace(s)
}
