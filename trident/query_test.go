package trident

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// mapGet queries map state with the first input field as the key.
type mapGet struct{}

func (mapGet) BatchRetrieve(ctx context.Context, ms state.MapState[int64], args []Tuple) ([]state.Entry[int64], error) {
	keys := make([]state.Key, len(args))
	for i, a := range args {
		k, err := state.NewKey(a.Value(0))
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return ms.MultiGet(ctx, keys)
}

func (mapGet) Execute(_ context.Context, _ Tuple, e state.Entry[int64], out Collector) error {
	out.Emit(e.Val)
	return nil
}

// onlyAt emits its sentences in the batch txid and nothing in others.
type onlyAt struct {
	txid      txn.TxID
	sentences []string
}

func (o *onlyAt) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	if a.TxID == o.txid {
		for _, s := range o.sentences {
			c.Emit(s)
		}
	}
	return nil
}
func (o *onlyAt) Ack(context.Context, txn.TxID) error { return nil }

// TestStateQuerySeesCommittedCounts is Storm's word count with a query
// stream: queries of batch 2 see every count written by batches 1 and 2.
func TestStateQuerySeesCommittedCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		words := &onlyAt{txid: 1, sentences: sentences}
		queries := &onlyAt{txid: 2, sentences: []string{"the cow moon nothing"}}
		answers := &sink{}
		tt := NewTopology("drpc")
		counts := PersistentAggregate(
			tt.NewStream("words", BatchSource(Fields{"sentence"}, func() spout.Batcher { return words })).
				FlatMap(splitWords, "word").GroupBy("word").Parallelism(3),
			OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		q := tt.NewStream("queries", BatchSource(Fields{"sentence"}, func() spout.Batcher { return queries })).
			FlatMap(splitWords, "word")
		StateQuery(q, counts, Fields{"word"}, mapGet{}, "count").Each(Fields{"word", "count"}, answers.fn())
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, a := range answers.all() {
			got[a[0].(string)] = a[1].(int64)
		}
		want := map[string]int64{"the": 4, "cow": 1, "moon": 1, "nothing": 0}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("answers = %v, want %v", got, want)
		}
	})
}

// lengths is static state: word lengths looked up per word.
type lengths map[string]int

type lengthOf struct{}

func (lengthOf) BatchRetrieve(_ context.Context, l lengths, args []Tuple) ([]int, error) {
	out := make([]int, len(args))
	for i, a := range args {
		out[i] = l[a.String("word")]
	}
	return out, nil
}

func (lengthOf) Execute(_ context.Context, _ Tuple, n int, out Collector) error {
	out.Emit(n)
	return nil
}

// journal is a State that records the words of each committed txid.
type journal struct {
	mu      sync.Mutex
	current txn.TxID
	words   map[txn.TxID][]string
}

func (j *journal) BeginCommit(_ context.Context, txid txn.TxID) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.current = txid
	delete(j.words, txid) // a replay rewrites the txid
	return nil
}

func (j *journal) Commit(context.Context, txn.TxID) error { return nil }

type appendWords struct{}

func (appendWords) UpdateState(_ context.Context, j *journal, tuples []Tuple, out Collector) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, t := range tuples {
		j.words[j.current] = append(j.words[j.current], t.String("word"))
	}
	out.Emit(len(tuples))
	return nil
}

func TestStaticStateAndPartitionPersist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		j := &journal{words: map[txn.TxID][]string{}}
		sizes := &sink{}
		tt := NewTopology("persist")
		w := tt.NewStream("s", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src })).FlatMap(splitWords, "word")
		table := StaticState(tt, func(context.Context, int, int) (lengths, error) {
			return lengths{"the": 3, "cow": 3, "moon": 4}, nil
		})
		withLen := StateQuery(w, table, Fields{"word"}, lengthOf{}, "len")
		long := withLen.Filter(FilterFunc(func(_ context.Context, t Tuple) (bool, error) { return t.Get("len").(int) > 3, nil }))
		persisted := PartitionPersist(long.Global(), func(context.Context, int, int) (*journal, error) { return j, nil },
			Fields{"word"}, appendWords{}, "n")
		persisted.NewValuesStream().Each(Fields{"n"}, sizes.fn())
		r := submit(t, tt, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 5); err != nil {
			t.Fatal(err)
		}
		j.mu.Lock()
		defer j.mu.Unlock()
		if fmt.Sprint(j.words) != "map[1:[moon]]" {
			t.Fatalf("journal = %v, want only moon in txid 1", j.words)
		}
		if got := sizes.all(); len(got) != 1 || got[0][0] != 1 {
			t.Fatalf("new values = %v, want one batch of 1", got)
		}
	})
}

// strictGet rejects queries for absent keys.
type strictGet struct{ mapGet }

func (strictGet) Execute(_ context.Context, _ Tuple, e state.Entry[int64], out Collector) error {
	if !e.Found {
		return Reject(errUnknownWord)
	}
	out.Emit(e.Val)
	return nil
}

var errUnknownWord = errorString("unknown word")

func TestStateQueryRejectsToDeadLetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		words := &onlyAt{txid: 1, sentences: sentences}
		queries := &onlyAt{txid: 2, sentences: []string{"cow nothing"}}
		answers, dlq := &sink{}, &MemoryDeadLetters{}
		tt := NewTopology("strict")
		counts := PersistentAggregate(
			tt.NewStream("words", BatchSource(Fields{"sentence"}, func() spout.Batcher { return words })).
				FlatMap(splitWords, "word").GroupBy("word"),
			OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		q := tt.NewStream("queries", BatchSource(Fields{"sentence"}, func() spout.Batcher { return queries })).
			FlatMap(splitWords, "word")
		StateQuery(q, counts, Fields{"word"}, strictGet{}, "count").Each(Fields{"word", "count"}, answers.fn())
		cfg := Config{}
		cfg.DeadLetters = dlq
		r := submit(t, tt, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if got := answers.all(); len(got) != 1 || got[0][0] != "cow" {
			t.Fatalf("answers = %v, want only cow", got)
		}
		if l := dlq.Letters(); len(l) != 1 || l[0].Values[0] != "nothing" {
			t.Fatalf("letters = %+v, want the query for nothing", l)
		}
	})
}
