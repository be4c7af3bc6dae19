package cassandra

import (
	"errors"
	"fmt"
	"strings"
)

// Layout says which columns hold a table's values.
type Layout uint8

const (
	// Envelope keeps whatever the map flavour stores in one blob column,
	// value: the flavour's own versioned msgpack envelope (see
	// docs/state.md). It works with every flavour and is the zero Layout.
	Envelope Layout = iota
	// Opaque keeps an opaque value in columns txid bigint, curr and prev
	// (Storm's layout): for the opaque map.
	Opaque
	// Transactional keeps columns txid bigint and val: for the
	// transactional map.
	Transactional
	// NonTransactional keeps one column val: for the non-transactional
	// map.
	NonTransactional
)

func (l Layout) String() string {
	switch l {
	case Envelope:
		return "envelope"
	case Opaque:
		return "opaque"
	case Transactional:
		return "transactional"
	case NonTransactional:
		return "non-transactional"
	}
	return fmt.Sprintf("layout(%d)", uint8(l))
}

// Column is a CQL column: a name and a CQL type such as "text", "bigint"
// or "timestamp".
type Column struct {
	Name string
	Type string
}

// TableSpec describes a state table.
type TableSpec struct {
	// Name is the table's name in the session's keyspace.
	Name string
	// Layout chooses the value columns. The zero value is Envelope.
	Layout Layout
	// Keys are the partition-key columns, one per group-by value, in
	// group-by order: a Key's values are bound to them by position, so a
	// group-by ("room", "hour") over a table with Keys {room text, hour
	// timestamp} reads and writes one partition per (room, hour). Empty
	// means one column k blob holding the key's canonical encoding, which
	// takes any key.
	Keys []Column
	// Values stores the user values (curr, prev, val) as a typed column
	// instead of a msgpack blob. Nil means blob. It does not apply to the
	// Envelope layout.
	Values Mapper
}

// reserved value column names.
var valueNames = map[string]bool{"txid": true, "curr": true, "prev": true, "val": true, "value": true}

// Validate reports whether the spec is usable.
func (t TableSpec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: table %q: "+format, append([]any{ErrConfig, t.Name}, args...)...))
	}
	if !identifier.MatchString(t.Name) {
		bad("the name is not a CQL identifier (a letter, then letters, digits or _, at most 48)")
	}
	if t.Layout > NonTransactional {
		bad("unknown %v", t.Layout)
	}
	if t.Layout == Envelope && t.Values != nil {
		bad("a Values mapper does not apply to the envelope layout")
	}
	if t.Values != nil && strings.TrimSpace(t.Values.CQLType()) == "" {
		bad("the Values mapper has no CQL type")
	}
	seen := map[string]bool{}
	for _, c := range t.Keys {
		name := strings.ToLower(c.Name)
		switch {
		case !identifier.MatchString(c.Name):
			bad("key column %q is not a CQL identifier", c.Name)
		case valueNames[name]:
			bad("key column %q has the name of a value column", c.Name)
		case seen[name]:
			bad("key column %q appears twice", c.Name)
		case strings.TrimSpace(c.Type) == "":
			bad("key column %q has no type", c.Name)
		}
		seen[name] = true
	}
	return errors.Join(errs...)
}

// keyColumns returns the key columns, the default k blob when none.
func (t TableSpec) keyColumns() []Column {
	if len(t.Keys) == 0 {
		return []Column{{Name: "k", Type: "blob"}}
	}
	return t.Keys
}

// valueColumns returns the value columns of the layout.
func (t TableSpec) valueColumns() []Column {
	typ := t.mapper().CQLType()
	switch t.Layout {
	case Opaque:
		return []Column{{"txid", "bigint"}, {"curr", typ}, {"prev", typ}}
	case Transactional:
		return []Column{{"txid", "bigint"}, {"val", typ}}
	case NonTransactional:
		return []Column{{"val", typ}}
	}
	return []Column{{"value", "blob"}}
}

func (t TableSpec) mapper() Mapper {
	if t.Values == nil || t.Layout == Envelope {
		return blobMapper{}
	}
	return t.Values
}

// createStatement returns CREATE TABLE IF NOT EXISTS for the spec.
func (t TableSpec) createStatement(keyspace string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s.%s (", keyspace, t.Name)
	var keys []string
	for _, c := range t.keyColumns() {
		fmt.Fprintf(&b, "%s %s, ", c.Name, c.Type)
		keys = append(keys, c.Name)
	}
	for _, c := range t.valueColumns() {
		fmt.Fprintf(&b, "%s %s, ", c.Name, c.Type)
	}
	fmt.Fprintf(&b, "PRIMARY KEY ((%s)))", strings.Join(keys, ", "))
	return b.String()
}

// deleteStatement returns the DELETE of one key, with its write timestamp
// bound like an INSERT's.
func (t TableSpec) deleteStatement(keyspace string) string {
	var where []string
	for _, c := range t.keyColumns() {
		where = append(where, c.Name+" = ?")
	}
	return fmt.Sprintf("DELETE FROM %s.%s USING TIMESTAMP ? WHERE %s", keyspace, t.Name, strings.Join(where, " AND "))
}

// statements returns the SELECT and INSERT of one key.
func (t TableSpec) statements(keyspace string) (sel, ins string) {
	var where, keys, vals, marks []string
	for _, c := range t.keyColumns() {
		where = append(where, c.Name+" = ?")
		keys = append(keys, c.Name)
		marks = append(marks, "?")
	}
	for _, c := range t.valueColumns() {
		vals = append(vals, c.Name)
		marks = append(marks, "?")
	}
	sel = fmt.Sprintf("SELECT %s FROM %s.%s WHERE %s", strings.Join(vals, ", "), keyspace, t.Name, strings.Join(where, " AND "))
	ins = fmt.Sprintf("INSERT INTO %s.%s (%s) VALUES (%s) USING TIMESTAMP ?", keyspace, t.Name,
		strings.Join(append(keys, vals...), ", "), strings.Join(marks, ", "))
	return sel, ins
}
