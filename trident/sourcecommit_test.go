package trident

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/txn"
)

// rowsState is a PartitionPersist state that keeps the rows it is given,
// by write.
type rowsState struct {
	mu   sync.Mutex
	rows map[txn.TxID][]string
}

func (s *rowsState) BeginCommit(context.Context, txn.TxID) error { return nil }
func (s *rowsState) Commit(context.Context, txn.TxID) error      { return nil }

type rowsUpdater struct{}

func (rowsUpdater) UpdateState(_ context.Context, st *rowsState, tuples []Tuple, out Collector) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	txid := txn.TxID(len(st.rows) + 1)
	var rows []string
	for _, t := range tuples {
		rows = append(rows, t.String("sentence"))
		out.Emit(t.String("sentence") + "!")
	}
	st.rows[txid] = rows
	return nil
}

// TestPartitionPersistOnASourceStream: a committer in its source's stage
// writes every batch once, in the commit phase, and what it emits reaches
// the stages downstream.
func TestPartitionPersistOnASourceStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tt := NewTopology("source-commit")
		s := tt.NewStream("s", FixedSource(Fields{"sentence"}, [][]any{{"a"}, {"b"}}, [][]any{{"c"}}, [][]any{{"d"}}))
		st := &rowsState{rows: map[txn.TxID][]string{}}
		persisted := PartitionPersist(s, func(context.Context, int, int) (*rowsState, error) { return st, nil },
			Fields{"sentence"}, StateUpdater[*rowsState](rowsUpdater{}), "shout")
		shouts := &sink{}
		persisted.NewValuesStream().Each(Fields{"shout"}, shouts.fn())
		r := submit(t, tt, Config{MaxBatchesInFlight: 3})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatalf("%v (crash: %v)", err, r.Health().LastCrash)
		}
		st.mu.Lock()
		var all []string
		for _, txid := range slices.Sorted(maps.Keys(st.rows)) {
			all = append(all, st.rows[txid]...)
		}
		st.mu.Unlock()
		if !slices.Equal(all, []string{"a", "b", "c", "d"}) {
			t.Fatalf("state rows %v, want a b c d once each", all)
		}
		var got []string
		for _, v := range shouts.all() {
			got = append(got, v[0].(string))
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"a!", "b!", "c!", "d!"}) {
			t.Fatalf("downstream of the new values: %v", got)
		}
	})
}
