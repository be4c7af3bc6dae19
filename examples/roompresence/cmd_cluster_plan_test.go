package main

import (
	"log/slog"
	"testing"

	"github.com/squallstream/squall"
)

// TestClusterBuildPlansWithoutServices: at a submit (Env.Planning) the
// cluster topology builds without Kafka or Cassandra settings, opening
// nothing (the package's goleak check would see a client left running),
// and its demand can be computed (it declares no load).
func TestClusterBuildPlansWithoutServices(t *testing.T) {
	getenv := func(k string) string {
		if k == clusterEnvPrefix+"TASKS" {
			return "3"
		}
		return ""
	}
	top := clusterTopology(getenv)
	tt, cfg, err := top.Build(squall.Env{Planning: true, Shares: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := tt.Demand(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Executors) == 0 || d.Master.CPU != 0 {
		t.Fatalf("demand %+v", d)
	}
}
