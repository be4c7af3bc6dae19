package topology

import (
	"fmt"
	"slices"
	"strings"

	"github.com/squallstream/squall/acker"
)

// TaskID identifies one task (one instance of a spout or bolt) in a running
// topology. Task ids are dense, start at 0 and are stable for a given
// topology: components are numbered in the order of their ids.
type TaskID = acker.TaskID

// RootID identifies one tuple tree.
type RootID = acker.RootID

// NoTask is the TaskID of no task.
const NoTask = acker.NoTask

// DefaultStream is the stream that Emit and Output use.
const DefaultStream = "default"

// Values are the values of one tuple. Once emitted, a Values slice is shared
// with every receiving task and must not be modified.
type Values []any

// Fields names the values of the tuples of one stream.
type Fields []string

// Index returns the position of name in f, or -1.
func (f Fields) Index(name string) int { return slices.Index(f, name) }

// String returns the fields as "[a b c]".
func (f Fields) String() string { return "[" + strings.Join(f, " ") + "]" }

// schema describes one declared output stream of a component.
type schema struct {
	component string
	stream    string
	fields    Fields
	index     map[string]int
	direct    bool
}

func newSchema(component, stream string, fields Fields, direct bool) *schema {
	s := &schema{component: component, stream: stream, fields: fields, direct: direct,
		index: make(map[string]int, len(fields))}
	for i, f := range fields {
		s.index[f] = i
	}
	return s
}

func (s *schema) String() string { return fmt.Sprintf("%s/%s%v", s.component, s.stream, s.fields) }
