package trident

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// rowsAt emits its rows in batch txid only.
type rowsAt struct {
	txid txn.TxID
	rows [][]any
}

func (r *rowsAt) EmitBatch(_ context.Context, a txn.Attempt, c spout.Collector) error {
	if a.TxID == r.txid {
		for _, row := range r.rows {
			c.Emit(row...)
		}
	}
	return nil
}
func (r *rowsAt) Ack(context.Context, txn.TxID) error { return nil }

func TestJoinModes(t *testing.T) {
	orders := [][]any{{1, 10}, {2, 20}, {3, 30}}
	statuses := [][]any{{2, "paid"}, {3, "new"}, {3, "paid"}, {4, "lost"}}
	inner := []string{"[2 20 paid]", "[3 30 new]", "[3 30 paid]"}
	cases := []struct {
		mode JoinMode
		want []string
	}{
		{Inner, inner},
		{LeftOuter, append([]string{"[1 10 <nil>]"}, inner...)},
		{RightOuter, append([]string{"[4 <nil> lost]"}, inner...)},
		{FullOuter, append([]string{"[1 10 <nil>]", "[4 <nil> lost]"}, inner...)},
	}
	for _, c := range cases {
		synctest.Test(t, func(t *testing.T) {
			out := &sink{}
			tt := NewTopology("join")
			o := tt.NewStream("orders", BatchSource(Fields{"order", "amount"}, func() spout.Batcher { return &rowsAt{1, orders} }))
			s := tt.NewStream("statuses", BatchSource(Fields{"id", "status"}, func() spout.Batcher { return &rowsAt{1, statuses} }))
			tt.Join(o, Fields{"order"}, s, Fields{"id"}, c.mode, "order", "amount", "status").Parallelism(2).
				Each(Fields{"order", "amount", "status"}, out.fn())
			r := submit(t, tt, Config{})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := r.WaitCommitted(ctx, 2); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tu := range out.all() {
				got = append(got, fmt.Sprint(tu))
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) {
				t.Fatalf("mode %d: joined %v, want %v", c.mode, got, want)
			}
		})
	}
}
