package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/squallstream/squall/topology"
)

// clusterWorkerArg is the first argument of the second worker process of
// cluster-acked, which runCluster starts from its own binary.
const clusterWorkerArg = "cluster-worker"

// Placement of cluster-acked, by component: the one Storm's default
// (even) scheduler picks for this topology with two workers (bench/storm
// logs it on every run): the spout and the id bolt in worker a, the sink
// bolt and the acker in worker b. Tuples cross from a to b between the id
// bolt and the sink, the spout's inits and the id bolt's acks go from a to
// the acker in b, and the acker's outcomes come back to the spout in a.
var clusterPlacement = map[string]topology.WorkerID{
	"spout": "a", "id": "a", "null": "b", "__acker": "b",
}

// clusterTopology is core-acked's topology and config, the same in both
// processes (task ids and the acker choice depend on them).
func clusterTopology(p *probe, o options) (*topology.Topology, topology.Config, map[topology.TaskID]topology.WorkerID, error) {
	b := topology.NewBuilder()
	b.Spout("spout", func() topology.Spout { return &constSpout{p: p, mode: timed} }).Output("value")
	b.Bolt("id", func() topology.Bolt { return &idBolt{} }).Output("value").Input("spout", topology.LocalOrShuffle())
	b.Bolt("null", func() topology.Bolt { return &sinkBolt{p: p, ack: true} }).Input("id", topology.LocalOrShuffle())
	topo, err := b.Build()
	if err != nil {
		return nil, topology.Config{}, nil, err
	}
	cfg := topology.DefaultConfig() // one acker, 30 s message timeout
	cfg.MaxSpoutPending = o.pending
	cfg.BatchSize = o.batch
	tasks := map[topology.TaskID]topology.WorkerID{}
	for task, comp := range topo.TaskComponents(cfg.Ackers) {
		w, ok := clusterPlacement[comp]
		if !ok {
			return nil, cfg, nil, fmt.Errorf("component %s has no worker", comp)
		}
		tasks[topology.TaskID(task)] = w
	}
	return topo, cfg, tasks, nil
}

// runClusterAcked runs core-acked's topology as two workers in two
// processes on loopback TCP: worker a (spout, id bolt) in this process,
// worker b (sink, acker) in a child process running this binary. It counts
// trees acked at the spout as core-acked does.
func runClusterAcked(ctx context.Context, o options) (string, error) {
	p := &probe{}
	topo, cfg, tasks, err := clusterTopology(p, o)
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		ln.Close()
		return "", err
	}
	child := exec.Command(self, clusterWorkerArg, "--peer", ln.Addr().String(),
		"--batch", strconv.Itoa(o.batch), "--pending", strconv.Itoa(o.pending))
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe() // closing it stops the child
	if err != nil {
		ln.Close()
		return "", err
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		ln.Close()
		return "", err
	}
	if err := child.Start(); err != nil {
		ln.Close()
		return "", err
	}
	exited := make(chan error, 1)
	stopChild := func() error {
		stdin.Close()
		select {
		case err := <-exited:
			return err
		case <-time.After(10 * time.Second):
			_ = child.Process.Kill()
			return errors.Join(errors.New("the second worker did not stop within 10 s; killed"), <-exited)
		}
	}
	// The child prints its address, then nothing else.
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, stdout); exited <- child.Wait() }()
	if err != nil {
		ln.Close()
		return "", errors.Join(fmt.Errorf("reading the second worker's address: %w", err), stopChild())
	}
	spec := topology.WorkerSpec{Self: "a", Tasks: tasks, Listener: ln,
		Peers: map[topology.WorkerID]string{"b": strings.TrimSpace(addr)}}
	r, err := topology.RunWorker("bench", topo, cfg, spec)
	if err != nil {
		ln.Close()
		return "", errors.Join(err, stopChild())
	}
	rate, err := measureRate(ctx, o, p, &p.acked)
	// Stop worker a first, draining its pending trees while b still runs.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(err, r.Stop(sctx), stopChild())
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("tuples_per_s=%.0f p50_us=%d p99_us=%d failed=%d workers=2 window_s=%s",
		rate, p.latency.quantile(0.50), p.latency.quantile(0.99), p.failed.Load(), seconds(o.window)), nil
}

// clusterWorker is worker b of cluster-acked, in the child process: it
// listens on loopback, prints its address on stdout, runs its share of the
// topology with peer as worker a's address, and stops when stdin closes.
func clusterWorker(args []string) error {
	o := options{}
	var peer string
	fs := newFlagSet(&o)
	fs.StringVar(&peer, "peer", "", "worker a's address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if peer == "" {
		return errors.New("--peer is needed")
	}
	topo, cfg, tasks, err := clusterTopology(&probe{}, o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	spec := topology.WorkerSpec{Self: "b", Tasks: tasks, Listener: ln,
		Peers: map[topology.WorkerID]string{"a": peer}}
	r, err := topology.RunWorker("bench", topo, cfg, spec)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Println(ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // b runs no spout: nothing to drain
	_ = r.Stop(ctx)
	return nil
}
