package cassandra_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/proctest"

	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/trident"
)

// Environment of the child processes of TestOverlappingProcesses.
const (
	overlapChildVar = "SQUALL_CASSANDRA_OVERLAP_TABLES" // opaque table, transactional table, namespace
	supersededLine  = "SUPERSEDED"
)

// TestOverlappingProcesses starts the pipeline in several child processes
// (this test binary, re-executed) over one Cassandra coordination store and
// the same Cassandra tables, each while the previous ones still run, at
// random offsets, SIGKILLs some of them, and finally runs the pipeline here
// as the newest owner. Both tables must equal the oracle exactly, and every
// child that was not killed must stop by itself, superseded.
func TestOverlappingProcesses(t *testing.T) {
	if names := os.Getenv(overlapChildVar); names != "" {
		runOverlapChild(t, names)
		return
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 9))
			s := cassandratest.Session(t)
			tabs := newPipelineTables(t, s)
			type child struct {
				cmd    *exec.Cmd
				out    proctest.Buffer
				killed bool
			}
			var children []*child
			t.Cleanup(func() {
				for _, c := range children {
					c.cmd.Process.Kill()
					c.cmd.Wait()
				}
			})
			for n := range 2 + rng.IntN(2) {
				c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestOverlappingProcesses$", "-test.v")}
				c.cmd.Env = append(os.Environ(),
					overlapChildVar+"="+strings.Join([]string{tabs.op.Spec().Name, tabs.tx.Spec().Name, tabs.namespace}, ","),
					cassandratest.KeyspaceVar+"="+s.Keyspace())
				c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
				if err := c.cmd.Start(); err != nil {
					t.Fatal(err)
				}
				children = append(children, c)
				time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond) // an offset, not a wait for a condition
				if n > 0 && rng.IntN(2) == 0 {
					victim := children[rng.IntN(len(children))]
					if !victim.killed {
						victim.cmd.Process.Kill() // SIGKILL, wherever it is
						victim.killed = true
					}
				}
			}
			r := startPipeline(t, s, tabs, nil)
			defer r.stop(t)
			finishPipeline(t, r, tabs)
			for i, c := range children {
				if c.killed {
					continue
				}
				done := make(chan error, 1)
				go func() { done <- c.cmd.Wait() }()
				select {
				case err := <-done:
					if err != nil || !strings.Contains(c.out.String(), supersededLine) {
						t.Fatalf("child %d ended with %v, not superseded:\n%s", i, err, c.out.String())
					}
				case <-time.After(2 * time.Minute):
					t.Fatalf("child %d did not stop after a newer process took over:\n%s", i, c.out.String())
				}
				c.killed = true // reaped
			}
		})
	}
}

// runOverlapChild runs the pipeline until a newer process supersedes it.
func runOverlapChild(t *testing.T, names string) {
	s := cassandratest.Session(t)
	r := startPipeline(t, s, openPipelineTables(t, s, names), nil)
	defer r.stop(t)
	<-r.running.Halted()
	if err := r.running.Err(); !errors.Is(err, trident.ErrSuperseded) {
		t.Fatalf("halted with %v, want ErrSuperseded", err)
	}
	fmt.Println(supersededLine)
}
