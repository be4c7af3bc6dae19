// Command testprog is a squall program for the cluster's process tests: a
// word count over fixed batches (then empty batches forever, so the
// committed txid keeps growing), registered as "wordcount" and "flaky".
//
// Its coordination store is the default: the cluster's etcd (under dev, a
// bbolt file in the data directory). The "flaky" topology fails to build on the supervisor named by
// $TESTPROG_FAIL_ON, so that its workers there never start; on the
// supervisor named by $TESTPROG_WIDE_ON, "wordcount" is built with another
// parallelism (a worker that builds another topology than its peers). With
// $TESTPROG_REPORT set, each worker process reports one error (a
// failure.Reported, whose batch replays) the first time it splits a
// sentence.
package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/squallstream/squall"
	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/trident"
)

func main() {
	squall.Main(
		squall.Topology{Name: "wordcount", Build: build("wordcount")},
		squall.Topology{Name: "flaky", Build: build("flaky")},
	)
}

func build(name string) func(squall.Env) (*trident.Topology, trident.Config, error) {
	return func(env squall.Env) (*trident.Topology, trident.Config, error) {
		if name == "flaky" && !env.Planning && env.Slot.Supervisor == os.Getenv("TESTPROG_FAIL_ON") {
			return nil, trident.Config{}, errors.New("testprog: flaky fails to build on " + env.Slot.Supervisor)
		}
		tt := trident.NewTopology(name)
		sentences := tt.NewStream("sentences", trident.FixedSource(trident.Fields{"sentence"},
			[][]any{{"the cow jumped over the moon"}, {"the man went to the store"}},
			[][]any{{"four score and seven years ago"}},
		))
		var report sync.Once
		split := trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
			var err error
			if os.Getenv("TESTPROG_REPORT") != "" {
				report.Do(func() { err = failure.Reported(errors.New("testprog: a reported error")) })
			}
			if err != nil {
				return err
			}
			for _, w := range strings.Fields(t.String("sentence")) {
				out.Emit(w)
			}
			return nil
		})
		words := sentences.Each(trident.Fields{"sentence"}, split, "word")
		if env.Slot.Supervisor == os.Getenv("TESTPROG_WIDE_ON") {
			words = words.Parallelism(3)
		}
		trident.PersistentAggregate(words.GroupBy("word"),
			trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
		// The worker closes this when it stops: the process tests check
		// the file it leaves (Env.CloseAtStop).
		env.CloseAtStop(closeMarker(filepath.Join(env.DataDir, "closed-at-stop")))
		// A nil Store: the cluster's etcd, or the dev default.
		cfg := trident.Config{BatchEmitInterval: 20 * time.Millisecond}
		// The counts are kept in memory, lost at every worker restart: the
		// process tests check the cluster's behaviour, not the counts
		// (TESTPROG_DURABLE=0 leaves it refused, as any topology would be).
		cfg.AllowVolatileState = os.Getenv("TESTPROG_DURABLE") != "0"
		// Batches lost with a worker of another share time out and replay
		// within seconds rather than the default 30s.
		cfg.Topology.MessageTimeout = 3 * time.Second
		return tt, cfg, nil
	}
}

// closeMarker writes an empty file at path when closed.
type closeMarker string

func (m closeMarker) Close() error { return os.WriteFile(string(m), nil, 0o600) }
