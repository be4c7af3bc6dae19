package statetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/statetest"
)

func TestFaultMapConformsWhenDisarmed(t *testing.T) {
	statetest.TestBackingMap(t, func(*testing.T) state.BackingMap[[]byte] {
		return statetest.NewFaultMap[[]byte](state.NewMemory(""), nil)
	})
}

func TestFaultMapPartialPut(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	fm := statetest.NewFaultMap[[]byte](mem, nil)
	keys := []state.Key{state.MustKey(1), state.MustKey(2), state.MustKey(3)}
	vals := [][]byte{{1}, {2}, {3}}

	fm.FailNext(statetest.OpPut, statetest.Retryable(2))
	err := fm.MultiPut(ctx, keys, vals)
	if !errors.Is(err, statetest.ErrInjected) || !failure.IsRetryable(err) {
		t.Fatalf("faulted put: %v", err)
	}
	es, _ := mem.MultiGet(ctx, keys)
	if !es[0].Found || !es[1].Found || es[2].Found {
		t.Errorf("after a put failing with 2 keys written: %+v", es)
	}
	// One-shot: the next put goes through.
	if err := fm.MultiPut(ctx, keys, vals); err != nil {
		t.Fatal(err)
	}
	if mem.Len() != 3 || fm.Calls(statetest.OpPut) != 2 {
		t.Errorf("Len() = %d, put calls = %d", mem.Len(), fm.Calls(statetest.OpPut))
	}
}

func TestFaultMapRule(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	fm := statetest.NewFaultMap[[]byte](state.NewMemory("mem"), statetest.FailCall(statetest.OpGet, 2, statetest.Fault{Err: boom}))
	k := []state.Key{state.MustKey("a")}
	for call := 1; call <= 3; call++ {
		_, err := fm.MultiGet(ctx, k)
		if (call == 2) != errors.Is(err, boom) {
			t.Errorf("get call %d: %v", call, err)
		}
	}
	fm.Disarm()
	fm.FailNext(statetest.OpGet, statetest.Fault{Err: boom})
	fm.Disarm()
	if _, err := fm.MultiGet(ctx, k); err != nil {
		t.Errorf("after Disarm: %v", err)
	}
	if fm.Name() != "mem" || !state.IsConcurrent(fm) || fm.Close() != nil {
		t.Error("optional interfaces are not forwarded")
	}
}
