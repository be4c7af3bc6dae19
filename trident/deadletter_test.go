package trident

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/trident/spout"
)

var errNotANumber = errors.New("not a number")

// numbers parses the "raw" field and rejects what does not parse.
var numbers = MapFunctionFunc(func(_ context.Context, t Tuple) ([]any, error) {
	n, err := strconv.Atoi(t.String("raw"))
	if err != nil {
		return nil, Reject(errNotANumber)
	}
	return []any{n%2 == 0}, nil
})

func rejectingTopology(src *fixedBatchSpout, f StateFactory[int64]) *Topology {
	tt := NewTopology("dlq")
	s := tt.NewStream("raw", BatchSource(Fields{"raw"}, func() spout.Batcher { return src }))
	PersistentAggregate(s.Map(numbers, "even").GroupBy("even"), f, Fields{"even"}, count{}, "count")
	return tt
}

func TestRejectedTuplesGoToDeadLetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(2, "1", "2", "x", "4", "y", "6")
		f := OpaqueMemory[int64]("parity")
		dlq := &MemoryDeadLetters{}
		cfg := Config{}
		cfg.DeadLetters = dlq
		r := submit(t, rejectingTopology(src, f), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 3); err != nil {
			t.Fatal(err)
		}
		got := map[bool]int64{}
		for p := range 1 {
			ms, _ := f(ctx, p, 1)
			vals, err := ms.MultiGet(ctx, keysOf(true, false))
			if err != nil {
				t.Fatal(err)
			}
			got[true], got[false] = vals[0].Val, vals[1].Val
		}
		if !maps.Equal(got, map[bool]int64{true: 3, false: 1}) {
			t.Fatalf("counts = %v", got)
		}
		letters := dlq.Letters()
		if len(letters) != 2 || r.Rejected() != 2 {
			t.Fatalf("%d letters, %d rejected; want 2", len(letters), r.Rejected())
		}
		for _, l := range letters {
			if !errors.Is(l.Err, errNotANumber) || l.Topology != "dlq" || l.Fields[0] != "raw" || l.Attempt.TxID == 0 {
				t.Fatalf("letter = %+v", l)
			}
		}
	})
}

func TestRejectWithoutDeadLettersStopsTheWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(2, "1", "x")
		r := submit(t, rejectingTopology(src, OpaqueMemory[int64]("parity")), Config{})
		time.Sleep(time.Second)
		h := r.Health()
		if h.Crashes == 0 || !errors.Is(h.LastCrash, ErrNoDeadLetters) {
			t.Fatalf("health = %+v; want a crash for the missing dead letters", h)
		}
	})
}
