package cassandra

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/gocql/gocql"
)

// Versions are the pointers readers follow to the version in use of
// versioned tables: the switch of "replay everything", where a topology
// rebuilds its results from the start of the log into new tables
// (VersionedName(name, n+1)) while the live one keeps writing version n,
// and readers move to the rebuild in one step once it is verified. One
// row per name in <keyspace>.squall_versions; Switch is a compare-and-set
// (a lightweight transaction), so readers see the old version or the
// new one, never a mix, and of two rebuilds racing to switch one wins.
type Versions struct {
	s                               *Session
	getStmt, insertStmt, switchStmt string
}

// VersionsTable names the table of the version pointers.
const VersionsTable = "squall_versions"

// ErrVersionChanged is matched by the error of a Switch whose expected
// current version is not the current one.
var ErrVersionChanged = errors.New("cassandra: the version in use changed")

// OpenVersions returns the version pointers of the session's keyspace,
// creating their table if needed.
func OpenVersions(ctx context.Context, s *Session) (*Versions, error) {
	t := s.Keyspace() + "." + VersionsTable
	if err := s.CreateTable(ctx, VersionsTable, "CREATE TABLE IF NOT EXISTS "+t+
		" (name text PRIMARY KEY, version int, previous int, switched timestamp)"); err != nil {
		return nil, err
	}
	return &Versions{s: s,
		getStmt:    "SELECT version FROM " + t + " WHERE name = ?",
		insertStmt: "INSERT INTO " + t + " (name, version, previous, switched) VALUES (?, ?, ?, toTimestamp(now())) IF NOT EXISTS",
		switchStmt: "UPDATE " + t + " SET version = ?, previous = ?, switched = toTimestamp(now()) WHERE name = ? IF version = ?",
	}, nil
}

// VersionedName is the table of version v of name: name itself for
// version 1 (tables made before versioning keep their name), name_v<N>
// from version 2 on.
func VersionedName(name string, version int) string {
	if version <= 1 {
		return name
	}
	return name + "_v" + strconv.Itoa(version)
}

// Current returns the version of name that readers use: 1 if it was never
// switched. It reads at the serial consistency, so it sees every switch
// that completed.
func (v *Versions) Current(ctx context.Context, name string) (int, error) {
	var version int
	err := v.s.SerialRead(ctx, v.getStmt, name).Scan(&version)
	switch {
	case errors.Is(err, gocql.ErrNotFound):
		return 1, nil
	case err != nil:
		return 0, Classify(fmt.Errorf("cassandra: read the version of %s: %w", name, err))
	}
	return version, nil
}

// Switch moves the readers of name from version from to version to, if
// from is still the current one; otherwise it fails with an error
// matching ErrVersionChanged and names the current version.
func (v *Versions) Switch(ctx context.Context, name string, from, to int) error {
	if from < 1 || to < 1 || from == to {
		return fmt.Errorf("cassandra: switch %s from version %d to %d: want two different versions from 1", name, from, to)
	}
	m := map[string]any{}
	var applied bool
	var err error
	if from == 1 {
		// Never switched: no row yet, or a row that went back to 1.
		if applied, err = v.s.CAS(ctx, v.insertStmt, name, to, from).MapScanCAS(m); err == nil && !applied {
			m = map[string]any{}
			applied, err = v.s.CAS(ctx, v.switchStmt, to, from, name, from).MapScanCAS(m)
		}
	} else {
		applied, err = v.s.CAS(ctx, v.switchStmt, to, from, name, from).MapScanCAS(m)
	}
	if err != nil {
		return Classify(fmt.Errorf("cassandra: switch %s from version %d to %d: %w", name, from, to, err))
	}
	if !applied {
		cur := 1
		if c, ok := m["version"].(int); ok {
			cur = c
		}
		return fmt.Errorf("%w: switch %s from version %d to %d: version %d is in use", ErrVersionChanged, name, from, to, cur)
	}
	return nil
}
