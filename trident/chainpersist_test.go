package trident

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// seenWords is PartitionPersist state: the txid in which each word was
// first seen. Writing it again in a replay changes nothing, as an upsert
// does.
type seenWords struct {
	mu   sync.Mutex
	txid txn.TxID
	seen map[string]txn.TxID
}

func (s *seenWords) BeginCommit(_ context.Context, txid txn.TxID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txid = txid
	return nil
}

func (*seenWords) Commit(context.Context, txn.TxID) error { return nil }

// firstSight records each word and emits, once, the words first seen in
// this batch. What it emits depends only on the stored state after the
// write, so a replay of the batch emits the same again.
type firstSight struct{}

func (firstSight) UpdateState(_ context.Context, st *seenWords, tuples []Tuple, out Collector) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	emitted := map[string]bool{}
	for _, t := range tuples {
		w := t.String("word")
		if _, ok := st.seen[w]; !ok {
			st.seen[w] = st.txid
		}
		if st.seen[w] == st.txid && !emitted[w] {
			emitted[w] = true
			out.Emit(w)
		}
	}
	return nil
}

// TestPersistFeedsPersistentAggregate chains two states in one commit: a
// PartitionPersist whose new values (first sightings of words) are merged
// with the word stream into an opaque count. Every word is counted once
// per occurrence plus once for its first sighting, although each batch's
// final commit fails once after both states were written, so every batch
// is committed twice over: the upsert is idempotent and the opaque count
// replaces the failed attempt's value.
func TestPersistFeedsPersistentAggregate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		seen := &seenWords{seen: map[string]txn.TxID{}}
		counts := OpaqueMemory[int64]("counts")
		tt := NewTopology("chain")
		words := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src })).FlatMap(splitWords, "word")
		firsts := PartitionPersist(words.PartitionBy("word").Parallelism(2),
			func(context.Context, int, int) (*seenWords, error) { return seen, nil },
			Fields{"word"}, StateUpdater[*seenWords](firstSight{}), "word").NewValuesStream()
		st := PersistentAggregate(tt.Merge(words, firsts).GroupBy("word").Parallelism(2), counts, Fields{"word"}, count{}, "count")
		var mu sync.Mutex
		failed := map[string]bool{}
		st.NewValuesStream().Each(Fields{"word", "count"}, FunctionFunc(func(_ context.Context, tu Tuple, _ Collector) error {
			mu.Lock()
			defer mu.Unlock()
			key := tu.String("word") + "/" + string(rune('0'+tu.Get("count").(int64)))
			if !failed[key] {
				failed[key] = true
				return failure.Retryable(errFlaky)
			}
			return nil
		}))
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, txn.TxID(len(sentences)+1)); err != nil {
			t.Fatal(err, r.Errors(), r.Health())
		}
		want := map[string]int64{}
		for _, s := range sentences {
			for _, w := range strings.Fields(s) {
				want[w]++
			}
		}
		ws := make([]string, 0, len(want))
		for w := range want {
			want[w]++ // the first sighting
			ws = append(ws, w)
		}
		got := readCounts(t, counts, 2, ws...)
		for _, w := range ws {
			if got[w] != want[w] {
				t.Errorf("%q: count %d, want %d", w, got[w], want[w])
			}
		}
		if len(failed) == 0 {
			t.Fatal("no commit failed")
		}
	})
}
