package docscheck

import (
	"strconv"
	"strings"
	"unicode"
)

// Slugger turns heading text into the anchors GitHub generates for a
// Markdown file: lower case, every character other than a letter, digit,
// space, hyphen or underscore removed, spaces replaced by hyphens, and a
// repeated slug suffixed with -1, -2 and so on. The zero value is ready to
// use; use one Slugger per file.
type Slugger struct {
	seen map[string]int
}

// Slug returns the anchor of a heading whose rendered text is text,
// counting it as seen.
func (s *Slugger) Slug(text string) string {
	if s.seen == nil {
		s.seen = make(map[string]int)
	}
	base := slugify(text)
	slug := base
	for {
		if _, dup := s.seen[slug]; !dup {
			break
		}
		s.seen[base]++
		slug = base + "-" + strconv.Itoa(s.seen[base])
	}
	s.seen[slug] = 0
	return slug
}

// slugify applies GitHub's character rules to text.
func slugify(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
