package trident

import (
	"fmt"

	"github.com/squallstream/squall/trident/internal/exec"

	"github.com/squallstream/squall/topology"
)

// Fields names the values of a stream's tuples.
type Fields = topology.Fields

// Tuple is one tuple of a Trident stream: values with named fields. It is
// valid only during the call it is passed to; keep its Values, not the
// Tuple.
type Tuple struct {
	values []any
	sch    *schema
}

// NewTuple returns a tuple with the given fields and values, for tests of
// operations. It panics if their lengths differ.
func NewTuple(fields Fields, values ...any) Tuple {
	if len(fields) != len(values) {
		panic(fmt.Sprintf("trident: %d values for fields %v", len(values), fields))
	}
	return Tuple{values: values, sch: newSchema(fields)}
}

// Len returns the number of values.
func (t Tuple) Len() int { return len(t.values) }

// Value returns the i-th value.
func (t Tuple) Value(i int) any { return t.values[i] }

// Values returns the values; the slice must not be modified.
func (t Tuple) Values() []any { return t.values }

// Fields returns the names of the values.
func (t Tuple) Fields() Fields { return t.sch.fields }

// Lookup returns the named value and whether the tuple has that field.
func (t Tuple) Lookup(field string) (any, bool) {
	i, ok := t.sch.index[field]
	if !ok {
		return nil, false
	}
	return t.values[i], true
}

// Get returns the named value. Asking for a field the tuple does not have
// is a programming error that Build normally catches; Get panics.
func (t Tuple) Get(field string) any {
	v, ok := t.Lookup(field)
	if !ok {
		panic(fmt.Sprintf("trident: tuple with fields %v has no field %q", t.sch.fields, field))
	}
	return v
}

// Select returns the values of fields, in that order, in a new slice
// (Storm's select(Fields)); it panics like Get if a field is missing.
func (t Tuple) Select(fields ...string) []any {
	out := make([]any, len(fields))
	for i, f := range fields {
		out[i] = t.Get(f)
	}
	return out
}

// String returns the named value as a string; it panics like Get if the
// field is missing and if the value is not a string.
func (t Tuple) String(field string) string {
	v := t.Get(field)
	s, ok := v.(string)
	if !ok {
		panic(fmt.Sprintf("trident: field %q is %T, not string", field, v))
	}
	return s
}

// schema indexes a list of fields.
type schema struct {
	fields Fields
	index  map[string]int
}

func newSchema(fields Fields) *schema {
	s := &schema{fields: fields, index: make(map[string]int, len(fields))}
	for i, f := range fields {
		s.index[f] = i
	}
	return s
}

// indexes returns the positions of names in s; Build has checked they
// exist.
func (s *schema) indexes(names Fields) []int {
	out := make([]int, len(names))
	for i, n := range names {
		out[i] = s.index[n]
	}
	return out
}

// project returns a tuple of the values at idx with schema to (a view
// of values where it can be: see exec.ProjectValues).
func project(values []any, idx []int, to *schema) Tuple {
	return Tuple{values: exec.ProjectValues(values, idx), sch: to}
}
