package trident

import (
	"context"
	"flag"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// TestMain runs the package's tests, checking that none leaks a
// goroutine. Unless -test.parallel is given, twice GOMAXPROCS parallel
// tests run at a time instead of GOMAXPROCS: the seed suites' parallel
// subtests with a bbolt coordination store spend most of their time
// waiting for fsync, and the others can use the CPU meanwhile.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	goleak.VerifyTestMain(m)
}

// fixedBatchSpout emits a fixed list of sentences in batches of size n,
// replaying the same batch for a txid until it is acknowledged, like
// Storm's FixedBatchSpout. After the list it emits empty batches.
type fixedBatchSpout struct {
	mu        sync.Mutex
	sentences []string
	n         int
	next      int
	batches   map[txn.TxID][]string
	emitted   int
}

func newFixed(n int, sentences ...string) *fixedBatchSpout {
	return &fixedBatchSpout{sentences: sentences, n: n, batches: map[txn.TxID][]string{}}
}

func (s *fixedBatchSpout) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.batches[a.TxID]
	if !ok {
		end := min(s.next+s.n, len(s.sentences))
		b = s.sentences[s.next:end]
		s.next = end
		s.batches[a.TxID] = b
	}
	for _, line := range b {
		c.Emit(line)
		s.emitted++
	}
	return nil
}

func (s *fixedBatchSpout) Ack(_ context.Context, txid txn.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.batches, txid)
	return nil
}

// split emits every word of the "sentence" field.
var split = FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
	for _, w := range strings.Fields(t.String("sentence")) {
		out.Emit(w)
	}
	return nil
})

// count is a CombinerAggregator counting tuples.
type count struct{}

func (count) Init(Tuple) (int64, error) { return 1, nil }
func (count) Combine(a, b int64) int64  { return a + b }
func (count) Zero() int64               { return 0 }

// readCounts reads the counts of words from partition state.
func readCounts(t *testing.T, f StateFactory[int64], partitions int, words ...string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	for p := range partitions {
		ms, err := f(context.Background(), p, partitions)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]state.Key, len(words))
		for i, w := range words {
			keys[i] = state.MustKey(w)
		}
		vals, err := ms.MultiGet(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if v.Found {
				got[words[i]] += v.Val
			}
		}
	}
	return got
}

// submit runs t on a local cluster of its own and registers its stop.
func submit(t *testing.T, tt *Topology, cfg Config) *Running {
	t.Helper()
	r, err := tt.Submit(context.Background(), cfg)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = r.Stop(ctx)
	})
	return r
}

// waitEvery checks cond every poll (in virtual time) until it holds,
// failing after limit.
func waitEvery(t *testing.T, limit, poll time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(poll)
	}
}

var errFlaky = errorString("injected retryable failure")

type errorString string

func (e errorString) Error() string { return string(e) }

func retryable(err error) error { return failure.Retryable(err) }

func containsText(s, sub string) bool { return strings.Contains(s, sub) }

// keysOf returns one state key per value.
func keysOf(values ...any) []state.Key {
	keys := make([]state.Key, len(values))
	for i, v := range values {
		keys[i] = state.MustKey(v)
	}
	return keys
}

func reported(err error) error { return failure.Reported(err) }

func splitAll(s string) []string { return strings.Fields(s) }
