package trident

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/internal/exec"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

var errFailTwice = errors.New("fails the batch")

// onceTopology parses the numbers of src (rejecting what does not parse)
// and then runs fail on the parity of every parsed tuple before counting
// by parity.
func onceTopology(src *fixedBatchSpout, fail func(odd bool) error) *Topology {
	tt := NewTopology("dlq")
	s := tt.NewStream("raw", BatchSource(Fields{"raw"}, func() spout.Batcher { return src }))
	s = s.Map(numbers, "even").Filter(FilterFunc(func(_ context.Context, t Tuple) (bool, error) {
		return true, fail(!t.Get("even").(bool))
	}))
	PersistentAggregate(s.GroupBy("even"), OpaqueMemory[int64]("parity"), Fields{"even"}, count{}, "count")
	return tt
}

// checkOnce checks the letters of onceTopology over batches {x, x, 1} and
// {x, 4} after batch 1 was attempted three times: one letter per rejected
// tuple (the two identical tuples of batch 1 are two letters), while the
// rejections of every attempt are counted.
func checkOnce(t *testing.T, dlq *MemoryDeadLetters, r *Running) {
	t.Helper()
	letters := dlq.Letters()
	ids := map[string]int{}
	for _, l := range letters {
		if !errors.Is(l.Err, errNotANumber) || !strings.HasPrefix(l.ID, "dlq/") {
			t.Fatalf("letter %+v", l)
		}
		ids[l.ID]++
	}
	if len(letters) != 3 || len(ids) != 2 {
		t.Fatalf("%d letters with %d IDs (%v), want 3 letters: two for the identical tuples of batch 1, one for batch 2",
			len(letters), len(ids), ids)
	}
	for id, n := range ids {
		if want := map[bool]int{true: 2, false: 1}[strings.Contains(id, "/1/")]; n != want {
			t.Fatalf("%d letters with ID %s, want %d", n, id, want)
		}
	}
	// Three attempts at batch 1 rejected two tuples each; batch 2 one.
	if got := r.Rejected(); got != 7 {
		t.Fatalf("rejected %d, want 7 (replays included)", got)
	}
}

// TestDeadLetterOncePerRejectedTuple: a batch holding malformed tuples
// fails twice (retryably, after the tuples were rejected) and commits on
// its third attempt; each rejected tuple has exactly one letter.
func TestDeadLetterOncePerRejectedTuple(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(3, "x", "x", "1", "x", "4")
		var failures atomic.Int32
		dlq := &MemoryDeadLetters{}
		cfg := Config{}
		cfg.DeadLetters = dlq
		r := submit(t, onceTopology(src, func(odd bool) error {
			if odd && failures.Add(1) <= 2 {
				return retryable(errFailTwice)
			}
			return nil
		}), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 2); err != nil {
			t.Fatal(err, r.Health())
		}
		if failures.Load() != 3 {
			t.Fatalf("batch 1 seen %d times, want 3 attempts", failures.Load())
		}
		checkOnce(t, dlq, r)
	})
}

// TestDeadLetterOnceAcrossARestart: the first attempt at the batch
// crashes the worker, the second fails it, the third commits: the
// restarted worker's attempts write no second letter.
func TestDeadLetterOnceAcrossARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(3, "x", "x", "1", "x", "4")
		var seen atomic.Int32
		dlq := &MemoryDeadLetters{}
		cfg := Config{}
		cfg.DeadLetters = dlq
		cfg.Topology.RestartMinBackoff = 100 * time.Millisecond
		r := submit(t, onceTopology(src, func(odd bool) error {
			if !odd {
				return nil
			}
			switch seen.Add(1) {
			case 1:
				panic("worker crash in the first attempt")
			case 2:
				return retryable(errFailTwice)
			}
			return nil
		}), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 2); err != nil {
			t.Fatal(err, r.Health())
		}
		if h := r.Health(); h.Crashes != 1 || seen.Load() != 3 {
			t.Fatalf("crashes %d, batch 1 seen %d times; want 1 crash and 3 attempts", h.Crashes, seen.Load())
		}
		checkOnce(t, dlq, r)
	})
}

// TestMemoryDeadLettersKeepsOnePerAttemptMaximum: the sink keeps, per ID,
// as many letters as the most one attempt put; letters without an ID are
// all kept.
func TestMemoryDeadLettersKeepsOnePerAttemptMaximum(t *testing.T) {
	ctx := context.Background()
	var m MemoryDeadLetters
	put := func(id string, txid, attempt int) {
		l := Letter{ID: id, Attempt: txn.Attempt{TxID: txn.TxID(txid), N: uint32(attempt)}}
		if err := m.Put(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	put("a", 1, 0)
	put("a", 1, 1) // a replay
	put("a", 1, 1) // the replay rejects a second identical tuple
	put("a", 1, 2)
	put("a", 1, 2)
	put("b", 1, 2)
	put("", 1, 2)
	put("", 1, 3)
	got := map[string]int{}
	for _, l := range m.Letters() {
		got[l.ID]++
	}
	if got["a"] != 2 || got["b"] != 1 || got[""] != 2 || len(m.Letters()) != 5 {
		t.Fatalf("letters by ID %v, want a:2 b:1 and both without an ID", got)
	}
	if id := exec.LetterID("t", "c", 7, []any{"x", 1}); id != exec.LetterID("t", "c", 7, []any{"x", 1}) ||
		id == exec.LetterID("t", "c", 8, []any{"x", 1}) || id == exec.LetterID("t", "c", 7, []any{"x", 2}) ||
		!strings.HasPrefix(id, "t/c/7/") {
		t.Fatalf("letter ID %q: not stable, or does not tell txids and values apart", id)
	}
}
