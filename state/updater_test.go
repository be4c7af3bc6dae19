package state_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
)

var sum = state.CombinerFunc[int](func(a, b int) int { return a + b })

func TestCombine(t *testing.T) {
	u := state.Combine[int](sum, 5)
	if got := u.Update(0, false); got != 5 {
		t.Errorf("absent: %d, want 5", got)
	}
	if got := u.Update(10, true); got != 15 {
		t.Errorf("present: %d, want 15", got)
	}
}

type lengths struct{}

func (lengths) Init() int                    { return 100 }
func (lengths) Reduce(acc int, s string) int { return acc + len(s) }

func TestReduce(t *testing.T) {
	u := state.Reduce[int, string](lengths{}, []string{"ab", "cde"})
	if got := u.Update(0, false); got != 105 {
		t.Errorf("absent: %d, want Init()+5 = 105", got)
	}
	if got := u.Update(1, true); got != 6 {
		t.Errorf("present: %d, want 6", got)
	}
	if got := state.Reduce[int, string](lengths{}, nil).Update(0, false); got != 100 {
		t.Errorf("no inputs on an absent key: %d, want Init()", got)
	}
}

func TestReplace(t *testing.T) {
	u := state.Replace("x")
	if got := u.Update("old", true); got != "x" {
		t.Errorf("Replace = %q", got)
	}
	if v, ok := state.Replacement(u); !ok || v != "x" {
		t.Errorf("Replacement = %q, %v", v, ok)
	}
	if _, ok := state.Replacement(state.Combine[int](sum, 1)); ok {
		t.Error("a combiner updater reported as a replacement")
	}
}

func TestMsgpackCodec(t *testing.T) {
	type point struct {
		X, Y int
		Tags map[string]string
	}
	c := state.Msgpack[point]{}
	p := point{X: 1, Y: -2, Tags: map[string]string{"b": "2", "a": "1"}}
	b1, err := c.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := c.Marshal(p)
	if string(b1) != string(b2) {
		t.Error("encoding is not deterministic")
	}
	got, err := c.Unmarshal(b1)
	if err != nil || got.X != 1 || got.Y != -2 || got.Tags["a"] != "1" {
		t.Errorf("round trip = %+v, %v", got, err)
	}
	if _, err := c.Unmarshal([]byte{0xc1}); err == nil {
		t.Error("Unmarshal of invalid bytes succeeded")
	}
}

// The reflection-free paths of Msgpack write what msgpack writes and read
// what it reads.
func TestMsgpackCodecFastPaths(t *testing.T) {
	ref := func(v any) []byte {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseCompactInts(true)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for _, n := range []int64{0, 5, -5, -100, 300, -40000, 1 << 40, math.MinInt64, math.MaxInt64} {
		b, _ := state.Msgpack[int64]{}.Marshal(n)
		if !bytes.Equal(b, ref(n)) {
			t.Errorf("int64 %d: %x, msgpack %x", n, b, ref(n))
		}
		if got, err := (state.Msgpack[int64]{}).Unmarshal(ref(n)); err != nil || got != n {
			t.Errorf("Unmarshal(%x) = %d, %v", ref(n), got, err)
		}
		bi, _ := state.Msgpack[int]{}.Marshal(int(n))
		if gi, err := (state.Msgpack[int]{}).Unmarshal(bi); !bytes.Equal(bi, b) || err != nil || gi != int(n) {
			t.Errorf("int %d: %x, %d, %v", n, bi, gi, err)
		}
	}
	for _, v := range []any{uint64(math.MaxUint64), 2.5, "", "hello", string(make([]byte, 300))} {
		var b []byte
		switch x := v.(type) {
		case uint64:
			b, _ = state.Msgpack[uint64]{}.Marshal(x)
		case float64:
			b, _ = state.Msgpack[float64]{}.Marshal(x)
		case string:
			b, _ = state.Msgpack[string]{}.Marshal(x)
		}
		if !bytes.Equal(b, ref(v)) {
			t.Errorf("%T: %x, msgpack %x", v, b[:min(8, len(b))], ref(v)[:min(8, len(b))])
		}
	}
	// Other integer encodings (a float, nil) still decode through msgpack.
	if got, err := (state.Msgpack[int64]{}).Unmarshal([]byte{0xc0}); err != nil || got != 0 {
		t.Errorf("Unmarshal(nil) = %d, %v", got, err)
	}
	if _, err := (state.Msgpack[int64]{}).Unmarshal([]byte{0xa1, 'x'}); err == nil {
		t.Error("a string decoded as an int64")
	}
}

func TestErrorHelpers(t *testing.T) {
	if state.WrapBackingError("m", "get", 1, nil) != nil || state.Transient(nil) != nil {
		t.Error("nil errors are wrapped")
	}
	err := state.WrapBackingError("m", "get", 3, context.Canceled)
	if !failure.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	reported := failure.Reported(errors.New("x"))
	if !failure.IsReported(state.WrapBackingError("m", "put", 1, reported)) {
		t.Error("WrapBackingError lost the cause's kind")
	}
	if failure.IsRetryable(state.WrapBackingError("m", "put", 1, errors.New("bad"))) {
		t.Error("an unclassified error became retryable")
	}
	de := state.Corrupt("m", state.MustKey("k"), errors.New("bad bytes"))
	if !errors.Is(de, state.ErrCorrupt) || !failure.IsReported(de) {
		t.Errorf("Corrupt: %v", de)
	}
	if state.NameOf(struct{}{}) != "struct {}" || state.IsConcurrent(struct{}{}) || state.Close(struct{}{}) != nil {
		t.Error("defaults for maps without optional interfaces")
	}
}
