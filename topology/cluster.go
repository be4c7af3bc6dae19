package topology

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// LocalCluster runs topologies in-process. Each submitted topology runs in
// its own supervised worker.
type LocalCluster struct {
	mu       sync.Mutex
	running  map[string]*Running
	shutdown bool
}

// NewLocalCluster returns a cluster with nothing running.
func NewLocalCluster() *LocalCluster {
	return &LocalCluster{running: make(map[string]*Running)}
}

// ErrClusterShutdown is returned by Submit after Shutdown.
var ErrClusterShutdown = errors.New("topology: local cluster is shut down")

// Submit validates cfg and starts t under name.
func (c *LocalCluster) Submit(name string, t *Topology, cfg Config) (*Running, error) {
	if name == "" {
		return nil, errors.New("topology: submit: empty topology name")
	}
	if t == nil {
		return nil, errors.New("topology: submit: nil topology")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shutdown {
		return nil, ErrClusterShutdown
	}
	if _, dup := c.running[name]; dup {
		return nil, fmt.Errorf("topology: submit: a topology named %q is already running", name)
	}
	cfg = cfg.withDefaults()
	if !cfg.acking() {
		cfg.Logger.Info("tuple tracking is off (Ackers = 0): spouts are acked at emit time", "topology", name)
	}
	if cfg.DisableTimeouts && cfg.MaxSpoutPending > 0 && cfg.acking() {
		cfg.Logger.Warn("timeouts are off and max spout pending is set: a tree that is never acked stalls its spout task", "topology", name)
	}
	r := start(name, t, cfg)
	c.running[name] = r
	return r, nil
}

// Kill stops the named topology (see Running.Stop) and forgets it.
func (c *LocalCluster) Kill(ctx context.Context, name string) error {
	c.mu.Lock()
	r := c.running[name]
	delete(c.running, name)
	c.mu.Unlock()
	if r == nil {
		return fmt.Errorf("topology: kill: no topology named %q", name)
	}
	return r.Stop(ctx)
}

// Shutdown stops every topology and refuses new submissions.
func (c *LocalCluster) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.shutdown = true
	all := c.running
	c.running = make(map[string]*Running)
	c.mu.Unlock()
	var errs []error
	for _, r := range all {
		errs = append(errs, r.Stop(ctx))
	}
	return errors.Join(errs...)
}
