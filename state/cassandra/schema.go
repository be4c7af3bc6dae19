package cassandra

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/squallstream/squall/failure"
)

// Replication is a keyspace's replication map, such as
// {"class": "NetworkTopologyStrategy", "dc1": "3"}.
type Replication map[string]string

// SimpleReplication is SimpleStrategy with replication factor rf: for one
// data centre and for tests.
func SimpleReplication(rf int) Replication {
	return Replication{"class": "SimpleStrategy", "replication_factor": fmt.Sprint(rf)}
}

// NetworkReplication is NetworkTopologyStrategy with a replication factor
// per data centre.
func NetworkReplication(perDC map[string]int) Replication {
	r := Replication{"class": "NetworkTopologyStrategy"}
	for dc, n := range perDC {
		r[dc] = fmt.Sprint(n)
	}
	return r
}

func (r Replication) cql() string {
	parts := make([]string, 0, len(r))
	for _, k := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("'%s': '%s'", strings.ReplaceAll(k, "'", "''"), strings.ReplaceAll(r[k], "'", "''")))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// EnsureKeyspace creates the session's keyspace with the given replication
// if it does not exist. An existing keyspace is left as it is, whatever
// its replication.
func (s *Session) EnsureKeyspace(ctx context.Context, r Replication) error {
	if r["class"] == "" {
		return fmt.Errorf("%w: replication without a class", ErrConfig)
	}
	stmt := fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s", s.cfg.Keyspace, r.cql())
	return s.ddl(ctx, "create keyspace "+s.cfg.Keyspace, stmt)
}

// DropKeyspace drops the session's keyspace and everything in it. Meant
// for tests and tear-down scripts.
func (s *Session) DropKeyspace(ctx context.Context) error {
	return s.ddl(ctx, "drop keyspace "+s.cfg.Keyspace, "DROP KEYSPACE IF EXISTS "+s.cfg.Keyspace)
}

// CreateTable creates a table from a CREATE TABLE IF NOT EXISTS statement
// of your own (the coordination store uses it) and waits for schema
// agreement.
func (s *Session) CreateTable(ctx context.Context, name, stmt string) error {
	return s.ddl(ctx, "create table "+s.cfg.Keyspace+"."+name, stmt)
}

// ddl runs a schema change and waits until the nodes agree on the schema.
// Nodes that do not agree in time (one restarting, say) are an outage:
// the change is idempotent, so the caller may run it again later.
func (s *Session) ddl(ctx context.Context, what, stmt string) error {
	if err := s.gs.Query(stmt).WithContext(ctx).Exec(); err != nil {
		return describe(what, err)
	}
	if err := s.gs.AwaitSchemaAgreement(ctx); err != nil {
		return failure.Unavailable(fmt.Errorf("cassandra: %s: waiting for schema agreement: %w", what, err))
	}
	return nil
}

// EnsureTable creates the table of spec if it does not exist (and the
// keyspace's fencing table, or adds the gen column to a fencing table an
// earlier version created), then checks its columns like OpenTable.
func (s *Session) EnsureTable(ctx context.Context, spec TableSpec) (*Table, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := s.ensureFences(ctx); err != nil {
		return nil, err
	}
	if err := s.ddl(ctx, "create table "+s.cfg.Keyspace+"."+spec.Name, spec.createStatement(s.cfg.Keyspace)); err != nil {
		return nil, err
	}
	return s.OpenTable(ctx, spec)
}

// OpenTable returns the table of spec after checking that it exists with
// the spec's key columns as its partition key, no clustering columns, and
// the layout's value columns with their types. A mismatch is an error
// matching ErrSchema that lists what differs.
func (s *Session) OpenTable(ctx context.Context, spec TableSpec) (*Table, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	name := s.cfg.Keyspace + "." + spec.Name
	have, err := s.columns(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("%w: table %s does not exist (create it with EnsureTable)", ErrSchema, name)
	}
	if err := checkColumns(spec, have); err != nil {
		return nil, fmt.Errorf("%w: table %s does not match its spec (%v layout): %v", ErrSchema, name, spec.Layout, err)
	}
	if err := s.checkFences(ctx); err != nil {
		return nil, err
	}
	return newTable(s, spec), nil
}

// column is one row of system_schema.columns.
type column struct {
	kind     string // partition_key, clustering, regular, static
	position int
	typ      string
}

func (s *Session) columns(ctx context.Context, table string) (map[string]column, error) {
	iter := s.Statement(ctx, `SELECT column_name, kind, position, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?`,
		strings.ToLower(s.cfg.Keyspace), strings.ToLower(table)).Iter()
	out := map[string]column{}
	var (
		name string
		c    column
	)
	for iter.Scan(&name, &c.kind, &c.position, &c.typ) {
		out[name] = c
	}
	if err := iter.Close(); err != nil {
		return nil, describe("read the columns of "+s.cfg.Keyspace+"."+table, err)
	}
	return out, nil
}

// checkColumns compares a table's columns with its spec.
func checkColumns(spec TableSpec, have map[string]column) error {
	var problems []string
	want := map[string]bool{}
	for i, c := range spec.keyColumns() {
		n := strings.ToLower(c.Name)
		want[n] = true
		got, ok := have[n]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("key column %s %s is missing", n, c.Type))
		case got.kind != "partition_key" || got.position != i:
			problems = append(problems, fmt.Sprintf("column %s is %s at position %d, want partition key column %d", n, got.kind, got.position, i))
		case !sameType(got.typ, c.Type):
			problems = append(problems, fmt.Sprintf("key column %s has type %s, want %s", n, got.typ, c.Type))
		}
	}
	for _, c := range spec.valueColumns() {
		want[c.Name] = true
		got, ok := have[c.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("value column %s %s is missing", c.Name, c.Type))
		case got.kind != "regular":
			problems = append(problems, fmt.Sprintf("value column %s is %s, want a regular column", c.Name, got.kind))
		case !sameType(got.typ, c.Type):
			problems = append(problems, fmt.Sprintf("value column %s has type %s, want %s", c.Name, got.typ, c.Type))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(have)) {
		if c := have[n]; !want[n] && c.kind != "regular" && c.kind != "static" {
			problems = append(problems, fmt.Sprintf("unexpected %s column %s", c.kind, n))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(problems, "; "))
}

// sameType compares CQL types, ignoring case, spaces and the varchar
// alias of text.
func sameType(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.ReplaceAll(s, " ", ""))
		return strings.ReplaceAll(s, "varchar", "text")
	}
	return norm(a) == norm(b)
}
