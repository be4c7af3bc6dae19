package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/worker"
	"github.com/squallstream/squall/trident"
)

// planDemand computes what topology t, run by workers workers, needs of
// the supervisors: submit builds it here, on the client, with
// worker.Env.Planning set (Build must open no connection), and asks the
// built topology its demand (trident.Topology.Demand), which the nimbus
// stores in the spec and the scheduler checks against the supervisors'
// capacity. It returns nil for a topology that declares no load.
func planDemand(t worker.Topology, workers int, log *slog.Logger) (d *meta.Demand, err error) {
	fail := func(what string, err error) error {
		return fmt.Errorf("planning topology %s before submitting it: %s (Build ran with Env.Planning set, on this "+
			"machine: it must build the topology without opening any connection): %w", t.Name, what, err)
	}
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, fail("Build panicked", fmt.Errorf("%v", p))
		}
	}()
	tt, cfg, err := t.Build(worker.Env{Planning: true, Share: trident.MasterShare, Shares: workers, Logger: log})
	if err != nil {
		return nil, fail("Build failed", err)
	}
	if c, ok := cfg.Store.(io.Closer); ok {
		defer c.Close() // a store Build opened although it plans: nothing uses it
	}
	if tt == nil {
		return nil, fail("Build returned no topology", errors.New("nil *trident.Topology"))
	}
	td, err := tt.Demand(cfg)
	if err != nil {
		return nil, fail("computing its demand failed", err)
	}
	return toMetaDemand(td), nil
}

// toMetaDemand converts a topology's demand to the spec's: nil when it
// declares no load (every figure zero).
func toMetaDemand(td trident.Demand) *meta.Demand {
	declared := td.Master != (trident.Resources{})
	d := &meta.Demand{Master: meta.Resources{CPU: td.Master.CPU, MemoryMB: td.Master.MemoryMB},
		Executors: make([]meta.Resources, len(td.Executors))}
	for i, r := range td.Executors {
		d.Executors[i] = meta.Resources{CPU: r.CPU, MemoryMB: r.MemoryMB}
		declared = declared || r != (trident.Resources{})
	}
	if !declared {
		return nil
	}
	return d
}

// largestShare returns what the largest of workers shares of d needs,
// which the scheduler counts every worker at; false for no demand.
func largestShare(d *meta.Demand, workers int) (meta.Resources, bool) {
	var out meta.Resources
	for _, r := range d.Shares(max(workers, 1)) {
		out.CPU, out.MemoryMB = max(out.CPU, r.CPU), max(out.MemoryMB, r.MemoryMB)
	}
	return out, d != nil
}
