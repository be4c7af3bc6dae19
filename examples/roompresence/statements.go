package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/gocql/gocql"
)

// Kinds of Cassandra statements the example counts.
const (
	stmtPresenceUpsert = "presence upsert"
	stmtPresenceRead   = "presence read"
	stmtTimelineRead   = "timeline read"
	stmtTimelineWrite  = "timeline write"
	stmtCoordination   = "coordination" // coordinator, spout, fences, versions
	stmtOther          = "other"
)

// statementCounter counts the statements a Cassandra session sends, by
// kind: it is the session's gocql QueryObserver and BatchObserver. Every
// attempt counts (a retried statement counts twice); a statement inside a
// batch counts as a statement, and the batch itself as one request.
type statementCounter struct {
	mu       sync.Mutex
	byKind   map[string]uint64
	requests uint64 // round trips: single statements plus batches
	batches  uint64
}

func newStatementCounter() *statementCounter {
	return &statementCounter{byKind: map[string]uint64{}}
}

// ObserveQuery counts one statement (one page of a paged read counts as
// one).
func (c *statementCounter) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	kind := statementKind(q.Statement)
	c.mu.Lock()
	c.byKind[kind]++
	c.requests++
	c.mu.Unlock()
}

// ObserveBatch counts a batch's statements and the batch as one request.
func (c *statementCounter) ObserveBatch(_ context.Context, b gocql.ObservedBatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range b.Statements {
		c.byKind[statementKind(s)]++
	}
	c.requests++
	c.batches++
}

// statementSource is a store that counts its statements (the Cassandra
// store).
type statementSource interface {
	Statements() statementCounts
}

// statementCounts is a snapshot of a statementCounter.
type statementCounts struct {
	ByKind   map[string]uint64
	Requests uint64 // round trips: single statements plus batches
	Batches  uint64
}

// Counts returns the counts so far.
func (c *statementCounter) Counts() statementCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return statementCounts{ByKind: maps.Clone(c.byKind), Requests: c.requests, Batches: c.batches}
}

// Total is the number of statements of every kind.
func (s statementCounts) Total() uint64 {
	var n uint64
	for _, v := range s.ByKind {
		n += v
	}
	return n
}

// describe renders the counts, and each kind per event when events is
// positive, as one line:
//
//	1,234 statements (1.50 per event; 1,234 requests, 0 batches): presence upsert 1,000 (1.00), ...
func (s statementCounts) describe(events uint64) string {
	per := func(n uint64) string {
		if events == 0 {
			return ""
		}
		return fmt.Sprintf(" (%.3f)", float64(n)/float64(events))
	}
	kinds := slices.Sorted(maps.Keys(s.ByKind)) // ties in name order
	slices.SortStableFunc(kinds, func(a, b string) int { return cmp.Compare(s.ByKind[b], s.ByKind[a]) })
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k + " " + thousands(s.ByKind[k]) + per(s.ByKind[k])
	}
	total := s.Total()
	head := thousands(total) + " statements ("
	if events > 0 {
		head += fmt.Sprintf("%.3f per event; ", float64(total)/float64(events))
	}
	head += fmt.Sprintf("%s requests, %s batches)", thousands(s.Requests), thousands(s.Batches))
	return head + ": " + strings.Join(parts, ", ")
}

// statementKind classifies a CQL statement by its verb and table.
func statementKind(stmt string) string {
	verb, table := verbAndTable(stmt)
	switch {
	case isTable(table, "presence") && (verb == "UPDATE" || verb == "INSERT"):
		return stmtPresenceUpsert
	case isTable(table, "presence") && verb == "SELECT":
		return stmtPresenceRead
	case isTable(table, timelineMap) && verb == "SELECT":
		return stmtTimelineRead
	case isTable(table, timelineMap) && (verb == "INSERT" || verb == "UPDATE"):
		return stmtTimelineWrite
	case table != "" && !isTable(table, "presence") && !isTable(table, timelineMap):
		return stmtCoordination
	}
	return stmtOther
}

// isTable reports whether table (without its keyspace) is name or one of
// its versions (name_vN).
func isTable(table, name string) bool {
	return table == name || strings.HasPrefix(table, name+"_v")
}

// verbAndTable returns the statement's verb (upper case) and the table it
// reads or writes, without its keyspace ("" when not found).
func verbAndTable(stmt string) (verb, table string) {
	words := strings.Fields(stmt)
	if len(words) == 0 {
		return "", ""
	}
	verb = strings.ToUpper(words[0])
	after := ""
	switch verb {
	case "SELECT", "DELETE":
		after = "FROM"
	case "INSERT":
		after = "INTO"
	case "UPDATE":
		if len(words) > 1 {
			table = words[1]
		}
	}
	if after != "" {
		for i, w := range words[:len(words)-1] {
			if strings.EqualFold(w, after) {
				table = words[i+1]
				break
			}
		}
	}
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		table = table[i+1:]
	}
	return verb, strings.ToLower(strings.TrimRight(table, "(;"))
}

// thousands formats n with commas between groups of three digits.
func thousands(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
