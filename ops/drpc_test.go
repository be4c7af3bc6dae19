package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
)

// TestDRPCLargeArgument: a DRPC request whose 1 MiB argument splits into
// 10,000 words, each looked up with MapGet in a word count and in a
// lookup table (most of them absent from both), is answered within a
// second over loopback (the fastest of up to three tries), and a larger
// argument is refused with 413 within a second (ten seconds under the
// race detector, which slows the topology's tasks about tenfold). The
// words' tuples carry the argument (Each appends the word to it): before
// MapGet encoded keys from the input fields only, each absent word copied
// it (10,000 MiB, minutes).
func TestDRPCLargeArgument(t *testing.T) {
	budget := time.Second
	if raceEnabled {
		budget = 10 * time.Second
	}
	server := drpc.NewServer(drpc.Config{})
	tt := trident.NewTopology("drpc-large")
	sentences := batches{{{"known words here"}}}
	counts := trident.PersistentAggregate(
		tt.NewStream("sentences", trident.BatchSource(trident.Fields{"sentence"}, func() spout.Batcher { return sentences })).
			FlatMap(trident.FlatMapFunctionFunc(splitArgs("sentence")), "word").GroupBy("word"),
		trident.OpaqueMemory[int64]("counts"), trident.Fields{"word"}, ops.Count{}, "count")
	table := trident.StaticState(tt, func(ctx context.Context, _, _ int) (*opaque.Map[int64], error) {
		m := opaque.New(state.NewMemory("table"), state.MapOptions[int64]{})
		if err := m.BeginCommit(ctx, 1); err != nil {
			return nil, err
		}
		if err := m.MultiPut(ctx, []state.Key{state.MustKey("known")}, []int64{7}); err != nil {
			return nil, err
		}
		return m, m.Commit(ctx, 1)
	})
	// Each, as Storm's DRPC examples split: the words' tuples are
	// (args, word).
	q := tt.NewDRPCStream("words", server).Each(trident.Fields{"args"}, trident.FunctionFunc(splitArgs("args")), "word")
	q = trident.StateQuery(q, table, trident.Fields{"word"}, ops.MapGet[*opaque.Map[int64]](), "listed")
	q = trident.StateQuery(q, counts, trident.Fields{"word"}, ops.MapGet[state.MapState[int64]](), "count")
	trident.ReturnResults(q, "words", "word", "listed", "count")
	runUntil(t, tt, trident.Config{BatchEmitInterval: time.Millisecond}, 1)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := server.HTTPServer(nil)
	go hs.Serve(ln)
	defer func() {
		// Shutdown waits for the connections, the ones a 413 closes
		// (after net/http's lingering) included.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	url := "http://" + ln.Addr().String() + "/drpc/words?timeout=30s"
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	var b strings.Builder
	b.WriteString("known ")
	for i := 0; b.Len() < 1<<20-110; i++ {
		fmt.Fprintf(&b, "%0100d ", i) // 101 bytes
	}
	args := b.String()
	nwords := len(strings.Fields(args))
	// The fastest of up to three tries counts: the machine may be busy
	// (the topology needs about 35 ms of CPU for this request); the
	// quadratic key encoding took minutes on every try.
	var fastest time.Duration
	for try := 0; try < 3 && (try == 0 || fastest > budget); try++ {
		start := time.Now()
		resp, err := client.Post(url, "text/plain", strings.NewReader(args))
		if err != nil {
			t.Fatal(err)
		}
		var res drpc.Result
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		took := time.Since(start)
		t.Logf("%d bytes, %d words: %d after %v", len(args), nwords, resp.StatusCode, took)
		if resp.StatusCode != http.StatusOK || err != nil || len(res.Rows) != nwords {
			t.Fatalf("%d bytes, %d words: %d, %v, %d rows", len(args), nwords, resp.StatusCode, err, len(res.Rows))
		}
		found := 0
		for _, row := range res.Rows {
			if row[1] != nil || row[2] != nil {
				found++
				if row[0] != "known" || row[1] != 7.0 || row[2] != 1.0 {
					t.Fatalf("row %v, want [known 7 1]", row)
				}
			}
		}
		if found != 1 {
			t.Fatalf("%d words found, want 1 (known)", found)
		}
		if try == 0 || took < fastest {
			fastest = took
		}
	}
	if fastest > budget {
		t.Fatalf("a 1 MiB argument of %d words took %v at best, want under %v", nwords, fastest, budget)
	}

	start := time.Now()
	resp, err := client.Post(url, "text/plain", strings.NewReader(strings.Repeat("x ", 1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusRequestEntityTooLarge || took > budget {
		t.Fatalf("a 2 MiB argument: %d after %v, want 413 within %v", resp.StatusCode, took, budget)
	}
}

// splitArgs splits field into words.
func splitArgs(field string) func(context.Context, trident.Tuple, trident.Collector) error {
	return func(_ context.Context, t trident.Tuple, out trident.Collector) error {
		for _, w := range strings.Fields(t.String(field)) {
			out.Emit(w)
		}
		return nil
	}
}
