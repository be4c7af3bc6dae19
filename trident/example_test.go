package trident_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// A word count: fixed batches of sentences, split into words, counted per
// word in opaque in-memory state, read back as of the last commit.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tt := trident.NewTopology("wordcount") // the coordinator's id: keep it stable
	sentences := tt.NewStream("sentences", trident.FixedSource(trident.Fields{"sentence"},
		[][]any{{"the cow jumped over the moon"}, {"the man went to the store"}},
		[][]any{{"four score and seven years ago"}},
	))
	split := trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
		for _, w := range strings.Fields(t.String("sentence")) {
			out.Emit(w)
		}
		return nil
	})
	counts := trident.PersistentAggregate(
		sentences.Each(trident.Fields{"sentence"}, split, "word").GroupBy("word"),
		trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")

	running, err := tt.Submit(ctx, trident.Config{}) // a local cluster of its own
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)
	if err := running.WaitCommitted(ctx, 2); err != nil { // both batches are in state
		fmt.Println(err)
		return
	}
	words := []string{"the", "moon", "seven", "absent"}
	keys := make([]state.Key, len(words))
	for i, w := range words {
		keys[i] = state.MustKey(w)
	}
	values, err := trident.ReadCommitted(ctx, running, counts, keys...)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, v := range values {
		fmt.Println(words[i], v.Val, v.Found)
	}
	// Output:
	// the 4 true
	// moon 1 true
	// seven 1 true
	// absent 0 false
}
