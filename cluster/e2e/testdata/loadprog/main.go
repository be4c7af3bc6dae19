// Command loadprog is a squall program for the end-to-end test of
// resource demands (cluster/e2e/demand_test.go): "loaded", a word count
// whose split declares 150% CPU and 64 MB per task (one task), so that
// each of its workers needs 150% CPU and 64 MB of a supervisor. Its counts
// are kept in memory, lost at a restart, as in cluster/internal/testprog.
package main

import (
	"context"
	"strings"
	"time"

	"github.com/squallstream/squall"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/trident"
)

func main() {
	squall.Main(squall.Topology{Name: "loaded", Build: build})
}

func build(squall.Env) (*trident.Topology, trident.Config, error) {
	tt := trident.NewTopology("loaded")
	split := trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
		for _, w := range strings.Fields(t.String("sentence")) {
			out.Emit(w)
		}
		return nil
	})
	words := tt.NewStream("sentences", trident.FixedSource(trident.Fields{"sentence"},
		[][]any{{"the cow jumped over the moon"}}, [][]any{{"four score and seven years ago"}},
	)).Each(trident.Fields{"sentence"}, split, "word").CPULoad(150).MemoryLoad(64)
	trident.PersistentAggregate(words.GroupBy("word"), trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
	cfg := trident.Config{BatchEmitInterval: 20 * time.Millisecond, AllowVolatileState: true}
	cfg.Topology.MessageTimeout = 3 * time.Second
	return tt, cfg, nil
}
