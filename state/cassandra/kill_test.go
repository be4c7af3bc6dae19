package cassandra_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/trident/coordstore/cassandrastore"
)

// Environment of the child process of TestProcessKilledAfterStateWrite.
const (
	killChildVar  = "SQUALL_CASSANDRA_KILL_CHILD"  // the flavour whose write is the kill point
	killTablesVar = "SQUALL_CASSANDRA_KILL_TABLES" // opaque table, transactional table, namespace
	killPoint     = "KILLPOINT"
)

// killAfter is a backing map that, after the n-th successful MultiPut of
// any map sharing its counter, prints killPoint and blocks: the state
// write of a batch has landed, its commit and the coordinator's record
// have not. The parent process kills it there.
type killAfter struct {
	state.BackingMap[[]byte]
	puts *atomic.Int64
	n    int64
}

func (k killAfter) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	if err := k.BackingMap.MultiPut(ctx, keys, vals); err != nil {
		return err
	}
	if k.puts.Add(1) == k.n {
		fmt.Println(killPoint)
		select {} // wait for SIGKILL
	}
	return nil
}

// TestProcessKilledAfterStateWrite runs the pipeline in a child process
// (this test binary, re-executed), kills it with SIGKILL right after a
// state write and before that batch's commit reaches the coordinator
// record, checks that the tables hold a txid beyond the committed one, and
// runs the pipeline again here: the final counts of the opaque and the
// transactional table equal the oracle exactly.
func TestProcessKilledAfterStateWrite(t *testing.T) {
	if flavour := os.Getenv(killChildVar); flavour != "" {
		runKillChild(t, flavour)
		return
	}
	for _, flavour := range []string{"op", "tx"} {
		t.Run(flavour, func(t *testing.T) {
			s := cassandratest.Session(t)
			ctx := t.Context()
			tabs := newPipelineTables(t, s)

			cmd := exec.Command(os.Args[0], "-test.run=^TestProcessKilledAfterStateWrite$", "-test.v")
			cmd.Env = append(os.Environ(),
				killChildVar+"="+flavour,
				killTablesVar+"="+strings.Join([]string{tabs.op.Spec().Name, tabs.tx.Spec().Name, tabs.namespace}, ","),
				cassandratest.KeyspaceVar+"="+s.Keyspace())
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var tail []string
			reached := make(chan bool, 1)
			var wg sync.WaitGroup
			wg.Go(func() {
				sc := bufio.NewScanner(out)
				found := false
				for sc.Scan() {
					if sc.Text() == killPoint && !found {
						found = true
						reached <- true
					}
					tail = append(tail, sc.Text())
				}
				if !found {
					reached <- false
				}
				io.Copy(io.Discard, out)
			})
			select {
			case ok := <-reached:
				if !ok {
					cmd.Wait()
					wg.Wait()
					t.Fatalf("the child exited before the kill point:\n%s", strings.Join(tail, "\n"))
				}
			case <-time.After(3 * time.Minute):
				cmd.Process.Kill()
				cmd.Wait()
				wg.Wait()
				t.Fatalf("the child did not reach the kill point in time:\n%s", strings.Join(tail, "\n"))
			}
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			cmd.Wait()
			wg.Wait()

			// The written state is ahead of the committed record: the next
			// run must replay a batch whose state write already landed.
			store, err := cassandrastore.Open(ctx, s, cassandrastore.Options{Namespace: tabs.namespace})
			if err != nil {
				t.Fatal(err)
			}
			rec, _, err := store.LoadCoordinator(ctx, "pipeline")
			store.Close()
			if err != nil {
				t.Fatal(err)
			}
			table := map[string]*cassandra.Table{"op": tabs.op, "tx": tabs.tx}[flavour]
			written := maxTxID(t, s, table)
			if written <= int64(rec.Committed) {
				t.Fatalf("killed with txid %d written and %d committed: the kill was not between a state write and its commit",
					written, rec.Committed)
			}
			t.Logf("killed with txid %d written to %s and txid %d committed", written, table.Name(), rec.Committed)

			r := startPipeline(t, s, tabs, nil)
			defer r.stop(t)
			finishPipeline(t, r, tabs)
		})
	}
}

// runKillChild is the child: it runs the pipeline until the kill point.
func runKillChild(t *testing.T, flavour string) {
	s := cassandratest.Session(t)
	tabs := openPipelineTables(t, s, os.Getenv(killTablesVar))
	puts := new(atomic.Int64)
	r := startPipeline(t, s, tabs, func(f string, _ int, b state.BackingMap[[]byte]) state.BackingMap[[]byte] {
		if f != flavour {
			return b
		}
		return killAfter{BackingMap: b, puts: puts, n: 7}
	})
	defer r.stop(t)
	<-t.Context().Done() // never: the parent kills this process
}

// openPipelineTables opens the tables a parent process created, named by
// "opaque table,transactional table,namespace".
func openPipelineTables(t *testing.T, s *cassandra.Session, names string) pipelineTables {
	t.Helper()
	parts := strings.Split(names, ",")
	if len(parts) != 3 {
		t.Fatalf("pipeline tables %q: want three names", names)
	}
	opSpec, txSpec := pipelineSpecs(parts[0], parts[1])
	tabs := pipelineTables{namespace: parts[2]}
	var err error
	if tabs.op, err = s.OpenTable(t.Context(), opSpec); err != nil {
		t.Fatal(err)
	}
	if tabs.tx, err = s.OpenTable(t.Context(), txSpec); err != nil {
		t.Fatal(err)
	}
	return tabs
}

// maxTxID returns the greatest txid stored in a table.
func maxTxID(t *testing.T, s *cassandra.Session, table *cassandra.Table) int64 {
	t.Helper()
	iter := s.Gocql().Query(`SELECT txid FROM ` + table.Name()).WithContext(t.Context()).Iter()
	var txid, top int64
	for iter.Scan(&txid) {
		top = max(top, txid)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	return top
}
