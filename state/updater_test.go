package state_test

import (
	"context"
	"errors"
	"testing"

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
