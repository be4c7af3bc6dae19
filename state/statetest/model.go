package statetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
	"github.com/squallstream/squall/txn"
)

// modelKeys is the number of distinct keys a model run touches.
const modelKeys = 6

// flavour selects the map under test in a model run.
type flavour int

const (
	flavourOpaque flavour = iota
	flavourTransactional
)

// TestOpaqueModel checks an opaque map over m against an exactly-once
// model, under random failures and replays of the latest txid whose
// content changes from attempt to attempt (as with an opaque spout).
//
// Each run drives batches 1..n. Every attempt of a batch updates random
// keys by random amounts, in one to three MultiUpdate calls, and may fail:
// a read error, or a write that stores only some of its keys (both
// injected with FaultMap), or a failure after Commit. Runs may restart the
// map between attempts (a worker restart) and may put an LRU under it.
//
// The model: the contribution of batch T to key K is what the last attempt
// of T that wrote K added to it. The final value of K, and the value every
// successful MultiUpdate returns, must be the sum of those contributions;
// in particular an attempt that is replayed never counts. (A key written
// only by a failed attempt keeps that attempt's contribution: opaque state
// cannot know that the replay no longer touches it. Trident does not
// replay batches whose state writes began unless the commit failed.)
//
// m may already hold data: each run uses keys of its own.
func TestOpaqueModel(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	runModel(t, m, flavourOpaque)
}

// TestTransactionalModel is TestOpaqueModel for a transactional map, with
// the conditions under which transactional state is exact: a replay has
// the content of the first attempt, and a batch updates each key at most
// once. The model is then plain exactly-once: the value of K is the sum of
// every batch's update of K.
func TestTransactionalModel(t *testing.T, m state.BackingMap[[]byte]) {
	t.Helper()
	runModel(t, m, flavourTransactional)
}

// update is one key's increment in a batch.
type update struct {
	key   int
	delta int64
}

func runModel(t *testing.T, base state.BackingMap[[]byte], fl flavour) {
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		ctx := context.Background()
		keys := make([]state.Key, modelKeys)
		for i := range keys {
			keys[i] = state.MustKey("model", fmt.Sprint(fl), run, i)
		}

		fm := NewFaultMap(base, nil)
		var bm state.BackingMap[[]byte] = fm
		if rapid.Bool().Draw(rt, "lru") {
			lru, err := state.NewLRU[[]byte](fm, rapid.IntRange(1, modelKeys+1).Draw(rt, "lruSize"))
			if err != nil {
				rt.Fatal(err)
			}
			bm = lru
		}
		newMap := func() state.MapState[int64] {
			if fl == flavourOpaque {
				return opaque.New(bm, state.MapOptions[int64]{})
			}
			return transactional.New(bm, state.MapOptions[int64]{})
		}
		m := newMap()

		committed := make([]int64, modelKeys) // sum of contributions of committed batches
		written := make([]bool, modelKeys)    // key ever written
		batches := rapid.IntRange(1, 6).Draw(rt, "batches")
		for tx := txn.TxID(1); tx <= txn.TxID(batches); tx++ {
			contrib := make(map[int]int64) // this batch's contribution per key
			attempts := rapid.IntRange(1, 4).Draw(rt, "attempts")
			var content [][]update // fixed across attempts for transactional maps
			for a := range attempts {
				final := a == attempts-1
				label := fmt.Sprintf("tx%v/attempt%d", tx, a)
				if a > 0 && rapid.Bool().Draw(rt, label+"/restart") {
					m = newMap()
				}
				if content == nil || fl == flavourOpaque {
					content = drawContent(rt, label, fl)
				}
				if err := m.BeginCommit(ctx, tx); err != nil {
					rt.Fatalf("%s: BeginCommit: %v", label, err)
				}
				failChunk, failOp := -1, Op(0)
				if !final && rapid.Bool().Draw(rt, label+"/failInside") {
					failChunk = rapid.IntRange(0, len(content)-1).Draw(rt, label+"/failChunk")
					failOp = rapid.SampledFrom([]Op{OpGet, OpPut}).Draw(rt, label+"/failOp")
				}
				landed := make(map[int]int64)
				failed := false
				for ci, chunk := range content {
					ks := make([]state.Key, len(chunk))
					ups := make([]state.ValueUpdater[int64], len(chunk))
					for j, u := range chunk {
						ks[j], ups[j] = keys[u.key], Add(u.delta)
					}
					writtenKeys := len(chunk)
					if ci == failChunk {
						if failOp == OpPut {
							writtenKeys = rapid.IntRange(0, len(chunk)).Draw(rt, label+"/written")
						}
						fm.FailNext(failOp, Retryable(writtenKeys))
					}
					vals, err := m.MultiUpdate(ctx, ks, ups)
					fm.Disarm() // a get fault may not be reached through the LRU
					if err != nil {
						if ci != failChunk {
							rt.Fatalf("%s chunk %d: unexpected error: %v", label, ci, err)
						}
						checkInjected(rt, label, err)
						if failOp == OpGet {
							writtenKeys = 0
						}
						for _, u := range chunk[:writtenKeys] {
							landed[u.key] += u.delta
						}
						failed = true
						break
					}
					for j, u := range chunk {
						landed[u.key] += u.delta
						if want := committed[u.key] + landed[u.key]; vals[j] != want {
							rt.Fatalf("%s chunk %d: key %d = %d, want %d", label, ci, u.key, vals[j], want)
						}
					}
				}
				for k, d := range landed {
					contrib[k] = d
					written[k] = true
				}
				if failed {
					continue
				}
				// A complete attempt commits; a non-final one then "fails
				// after commit" and is replayed.
				if err := m.Commit(ctx, tx); err != nil {
					rt.Fatalf("%s: Commit: %v", label, err)
				}
			}
			for k, d := range contrib {
				committed[k] += d
			}
			es, err := m.MultiGet(ctx, keys)
			if err != nil {
				rt.Fatalf("tx%v: MultiGet: %v", tx, err)
			}
			for k, e := range es {
				if e.Found != written[k] || e.Val != committed[k] {
					rt.Fatalf("after tx%v: key %d = %+v, want %d (present %v)", tx, k, e, committed[k], written[k])
				}
			}
		}
	})
}

// drawContent draws a batch: one to three chunks of distinct keys. For
// transactional maps a key appears in at most one chunk.
func drawContent(rt *rapid.T, label string, fl flavour) [][]update {
	n := rapid.IntRange(1, 3).Draw(rt, label+"/chunks")
	var free []int
	if fl == flavourTransactional {
		free = rapid.Permutation([]int{0, 1, 2, 3, 4, 5}).Draw(rt, label+"/keys")
	}
	chunks := make([][]update, 0, n)
	for c := range n {
		var ks []int
		if fl == flavourTransactional {
			take := rapid.IntRange(0, len(free)).Draw(rt, fmt.Sprintf("%s/chunk%d/n", label, c))
			ks, free = free[:take], free[take:]
		} else {
			ks = rapid.SliceOfNDistinct(rapid.IntRange(0, modelKeys-1), 0, modelKeys, rapid.ID[int]).
				Draw(rt, fmt.Sprintf("%s/chunk%d/keys", label, c))
		}
		chunk := make([]update, len(ks))
		for j, k := range ks {
			chunk[j] = update{key: k, delta: rapid.Int64Range(-5, 20).Draw(rt, fmt.Sprintf("%s/chunk%d/d%d", label, c, j))}
		}
		chunks = append(chunks, chunk)
	}
	return chunks
}

// checkInjected checks that an injected fault surfaces as a retryable
// backing map error.
func checkInjected(rt *rapid.T, label string, err error) {
	var me *state.MapError
	if !errors.Is(err, ErrInjected) || !errors.As(err, &me) || !failure.IsRetryable(err) {
		rt.Fatalf("%s: error %v: want a retryable *state.MapError wrapping ErrInjected", label, err)
	}
}
