package spout_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

func TestExecutorConfigErrors(t *testing.T) {
	src := spouttest.NewSource("p")
	ok := spout.ExecutorConfig[offsets]{Store: ownedStore(), Stream: stream, Fence: testFence, Emitter: src.Emitter()}
	for name, mod := range map[string]func(*spout.ExecutorConfig[offsets]){
		"nil store":      func(c *spout.ExecutorConfig[offsets]) { c.Store = nil },
		"nil emitter":    func(c *spout.ExecutorConfig[offsets]) { c.Emitter = nil },
		"empty stream":   func(c *spout.ExecutorConfig[offsets]) { c.Stream = "" },
		"negative tasks": func(c *spout.ExecutorConfig[offsets]) { c.NumTasks = -1 },
		"task too high":  func(c *spout.ExecutorConfig[offsets]) { c.Task, c.NumTasks = 2, 2 },
		"task of one":    func(c *spout.ExecutorConfig[offsets]) { c.Task = 1 },
		"negative task":  func(c *spout.ExecutorConfig[offsets]) { c.Task = -1 },
		"zero config":    func(c *spout.ExecutorConfig[offsets]) { *c = spout.ExecutorConfig[offsets]{} },
	} {
		cfg := ok
		mod(&cfg)
		if _, err := spout.NewTransactional(cfg); !errors.Is(err, spout.ErrInvalidConfig) {
			t.Errorf("%s: NewTransactional: %v, want ErrInvalidConfig", name, err)
		}
		if _, err := spout.NewOpaque(cfg); !errors.Is(err, spout.ErrInvalidConfig) {
			t.Errorf("%s: NewOpaque: %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := spout.NewOpaque(ok); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	if _, err := spout.NewBatchExecutor(spout.BatchConfig{}); !errors.Is(err, spout.ErrInvalidConfig) {
		t.Errorf("NewBatchExecutor without spout: %v", err)
	}
}

func TestAllocatorConfigErrors(t *testing.T) {
	src := spouttest.NewSource("p")
	for name, cfg := range map[string]spout.AllocatorConfig{
		"zero":       {},
		"bad kind":   {Kind: 9, Store: ownedStore(), Stream: stream, Fence: testFence, Partitions: src},
		"nil store":  {Kind: spout.Opaque, Stream: stream, Fence: testFence, Partitions: src},
		"no stream":  {Kind: spout.Transactional, Store: ownedStore(), Partitions: src},
		"no lister":  {Kind: spout.Opaque, Store: ownedStore(), Stream: stream},
		"long name":  {Kind: spout.Opaque, Store: ownedStore(), Stream: strings.Repeat("s", 1025), Partitions: src},
		"no lister2": {Kind: spout.Transactional, Store: ownedStore(), Stream: stream},
	} {
		if _, err := spout.NewAllocator(cfg); !errors.Is(err, spout.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	c, err := spout.NewAllocator(spout.AllocatorConfig{Kind: spout.NonTransactional})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Begin(t.Context(), at(1, 0))
	if err != nil || b.Partitions != nil || b.Attempt != at(1, 0) {
		t.Fatalf("non-transactional Begin = %+v, %v", b, err)
	}
}

func TestInvalidPartitions(t *testing.T) {
	for _, p := range []spout.Partition{"", "$partitions", "$x", spout.Partition(strings.Repeat("p", 1025))} {
		if err := p.Validate(); !errors.Is(err, spout.ErrInvalidPartition) {
			t.Errorf("Validate(%.20q) = %v", p, err)
		}
		lister := spout.ListerFunc(func(context.Context) ([]spout.Partition, error) { return []spout.Partition{"a", p}, nil })
		c, err := spout.NewAllocator(spout.AllocatorConfig{Kind: spout.Opaque, Store: ownedStore(), Stream: stream, Fence: testFence, Partitions: lister})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Begin(t.Context(), at(1, 0))
		if !errors.Is(err, spout.ErrInvalidPartition) || failure.IsRetryable(err) {
			t.Errorf("Begin with partition %.20q: %v, want a fatal ErrInvalidPartition", p, err)
		}
	}
	// Duplicates and order do not matter.
	lister := spout.ListerFunc(func(context.Context) ([]spout.Partition, error) { return []spout.Partition{"b", "a", "b"}, nil })
	c, _ := spout.NewAllocator(spout.AllocatorConfig{Kind: spout.Opaque, Store: ownedStore(), Stream: stream, Fence: testFence, Partitions: lister})
	if b, err := c.Begin(t.Context(), at(1, 0)); err != nil || len(b.Partitions) != 2 || b.Partitions[0] != "a" {
		t.Fatalf("Begin = %+v, %v", b, err)
	}
}

// A Batch that no allocator made is refused.
func TestInvalidBatch(t *testing.T) {
	src := spouttest.NewSource("a", "b")
	x, err := spout.NewOpaque(spout.ExecutorConfig[offsets]{Store: ownedStore(), Stream: stream, Fence: testFence, Emitter: src.Emitter()})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range [][]spout.Partition{{"b", "a"}, {"a", "a"}, {""}, {"$x"}} {
		err := x.EmitBatch(t.Context(), spout.Batch{Attempt: at(1, 0), Partitions: ps}, &spouttest.Collector{})
		if !errors.Is(err, spout.ErrInvalidBatch) {
			t.Errorf("EmitBatch(%q) = %v, want ErrInvalidBatch", ps, err)
		}
	}
}

func TestListerErrorKeepsKind(t *testing.T) {
	boom := errors.New("metadata request timed out")
	lister := spout.ListerFunc(func(context.Context) ([]spout.Partition, error) { return nil, failure.Retryable(boom) })
	for _, kind := range both {
		c, _ := spout.NewAllocator(spout.AllocatorConfig{Kind: kind, Store: ownedStore(), Stream: stream, Fence: testFence, Partitions: lister})
		if _, err := c.Begin(t.Context(), at(1, 0)); !errors.Is(err, boom) || !failure.IsRetryable(err) {
			t.Errorf("%s: Begin = %v, want the lister's retryable error", kind, err)
		}
	}
}

func TestEmitterErrorKeepsKind(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		fill(src, "p", 1)
		r := newRig(t, kind, ownedStore(), src, 1)
		boom := errors.New("broker unreachable")
		fatal := errors.New("bad schema")
		src.SetFault(func(c spouttest.Call) error {
			if c.Op == "emit" && c.Attempt.N == 0 {
				return failure.Retryable(boom)
			}
			if c.Op == "emit" && c.Attempt.N == 1 {
				return fatal
			}
			return nil
		})
		_, _, err := r.tryEmit(at(1, 0))
		var pe *spout.PartitionError
		if !errors.Is(err, boom) || !failure.IsRetryable(err) || !errors.As(err, &pe) || pe.Op != "emit" || pe.Partition != "p" {
			t.Fatalf("retryable emitter error came back as %v", err)
		}
		if _, _, err := r.tryEmit(at(1, 1)); !errors.Is(err, fatal) || failure.KindOf(err) != failure.Fatal {
			t.Fatalf("fatal emitter error came back as %v (%s)", err, failure.KindOf(err))
		}
		src.SetFault(nil)
		wantRecs(t, "after the errors", r.batch(at(1, 2)), recs("p", 0, 1))
	})
}

func TestRefreshError(t *testing.T) {
	src := spouttest.NewSource("p")
	fill(src, "p", 1)
	r := newRig(t, spout.Opaque, ownedStore(), src, 1)
	boom := failure.Retryable(errors.New("cannot open reader"))
	src.SetFault(func(c spouttest.Call) error {
		if c.Op == "refresh" {
			return boom
		}
		return nil
	})
	if _, _, err := r.tryEmit(at(1, 0)); !errors.Is(err, boom) || !failure.IsRetryable(err) {
		t.Fatalf("EmitBatch with a failing Refresh = %v", err)
	}
	src.SetFault(nil)
	wantRecs(t, "next attempt refreshes again", r.batch(at(1, 1)), recs("p", 0, 1))
	if o := r.emitters[0].Owned(); len(o) != 1 {
		t.Fatalf("owned %v after refresh", o)
	}
}

// BeginCommit must name the attempt that was emitted last, and that
// emission must have succeeded.
func TestBeginCommitUnknownAttempt(t *testing.T) {
	src := spouttest.NewSource("p")
	fill(src, "p", 1)
	r := newRig(t, spout.Opaque, ownedStore(), src, 1)
	ctx := t.Context()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, spout.ErrUnknownAttempt) || !failure.IsRetryable(err) {
			t.Fatalf("%s: %v, want a retryable ErrUnknownAttempt", what, err)
		}
	}
	check("allocator, nothing begun", r.alloc.BeginCommit(ctx, at(1, 0)))
	check("executor, nothing emitted", r.execs[0].BeginCommit(ctx, at(1, 0)))
	r.emit(at(1, 0))
	r.emit(at(1, 1))
	check("allocator, old attempt", r.alloc.BeginCommit(ctx, at(1, 0)))
	check("executor, old attempt", r.execs[0].BeginCommit(ctx, at(1, 0)))
	src.SetFault(func(spouttest.Call) error { return errors.New("boom") })
	if _, _, err := r.tryEmit(at(1, 2)); err == nil {
		t.Fatal("emit with a failing emitter succeeded")
	}
	check("executor, failed emission", r.execs[0].BeginCommit(ctx, at(1, 2)))
	wantEntries(t, r.store, "p")
}

func TestStaleBatch(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		r := newRig(t, kind, ownedStore(), src, 1)
		r.batch(at(1, 0))
		r.batch(at(2, 0))
		b := spout.Batch{Attempt: at(2, 1), Partitions: []spout.Partition{"p"}}
		if err := r.execs[0].EmitBatch(t.Context(), b, &spouttest.Collector{}); !errors.Is(err, spout.ErrStale) || failure.IsRetryable(err) {
			t.Fatalf("EmitBatch of a committed txid = %v, want a fatal ErrStale", err)
		}
	})
}

// Stored metadata that cannot be decoded is a fatal error, never "no
// metadata" (STORM-2675 restarted partitions from scratch).
func TestBadMetadata(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		fill(src, "p", 2)
		store := ownedStore()
		r := newRig(t, kind, store, src, 1)
		r.batch(at(1, 0))
		k := coordstore.Key{Owner: testFence.Owner, Stream: stream, Partition: "p"}
		for _, v := range []string{"\x01{not json", "\x07{}", "not enveloped"} {
			if err := store.PutMeta(t.Context(), testFence.Generation, k, 1, []byte(v)); err != nil {
				t.Fatal(err)
			}
			_, _, err := r.tryEmit(at(2, 0))
			if !errors.Is(err, spout.ErrBadMetadata) || failure.IsRetryable(err) {
				t.Fatalf("stored %q: %v, want a fatal ErrBadMetadata", v, err)
			}
		}
		ck := coordstore.Key{Owner: testFence.Owner, Stream: stream, Partition: "$partitions"}
		if err := store.PutMeta(t.Context(), testFence.Generation, ck, 2, []byte("\x01[\"b\",\"a\"]")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.alloc.Begin(t.Context(), at(2, 1)); !errors.Is(err, spout.ErrBadMetadata) {
			t.Fatalf("unsorted stored partition list: %v", err)
		}
	})
}

type badCodec struct{ spout.JSON[offsets] }

func (badCodec) Encode(offsets) ([]byte, error) { return nil, errors.New("cannot encode") }

func TestEncodeError(t *testing.T) {
	src := spouttest.NewSource("p")
	fill(src, "p", 1)
	store := ownedStore()
	x, err := spout.NewTransactional(spout.ExecutorConfig[offsets]{Store: store, Stream: stream, Fence: testFence, Emitter: src.Emitter(), Codec: badCodec{}})
	if err != nil {
		t.Fatal(err)
	}
	var c spouttest.Collector
	err = x.EmitBatch(t.Context(), spout.Batch{Attempt: at(1, 0), Partitions: []spout.Partition{"p"}}, &c)
	if !errors.Is(err, spout.ErrBadMetadata) || len(c.Tuples()) != 0 {
		t.Fatalf("EmitBatch with a failing codec = %v, %d tuples", err, len(c.Tuples()))
	}
}

func TestClose(t *testing.T) {
	forKinds(t, func(t *testing.T, kind spout.Kind) {
		src := spouttest.NewSource("p")
		r := newRig(t, kind, ownedStore(), src, 1)
		r.batch(at(1, 0))
		x, c, e := r.execs[0], r.alloc, r.emitters[0]
		if err := x.Close(); err != nil || !e.Closed() {
			t.Fatalf("Close = %v, emitter closed %v", err, e.Closed())
		}
		if err := x.Close(); err != nil {
			t.Fatalf("second Close = %v", err)
		}
		ctx := t.Context()
		if err := x.EmitBatch(ctx, spout.Batch{Attempt: at(2, 0)}, &spouttest.Collector{}); !errors.Is(err, spout.ErrClosed) {
			t.Fatalf("EmitBatch after Close = %v", err)
		}
		if err := x.BeginCommit(ctx, at(2, 0)); !errors.Is(err, spout.ErrClosed) {
			t.Fatalf("BeginCommit after Close = %v", err)
		}
		if err := x.Success(ctx, 2); !errors.Is(err, spout.ErrClosed) {
			t.Fatalf("Success after Close = %v", err)
		}
		c.Close()
		if _, err := c.Begin(ctx, at(2, 0)); !errors.Is(err, spout.ErrClosed) {
			t.Fatalf("Begin after Close = %v", err)
		}
		if c.Ready(ctx, 2) {
			t.Fatal("a closed allocator is ready")
		}
	})
}

type readyLister struct {
	*spouttest.Source
	ready func(txn.TxID) bool
}

func (l readyLister) Ready(_ context.Context, txid txn.TxID) bool { return l.ready(txid) }

func TestReady(t *testing.T) {
	src := spouttest.NewSource("p")
	c, _ := spout.NewAllocator(spout.AllocatorConfig{Kind: spout.Opaque, Store: ownedStore(), Stream: stream, Fence: testFence, Partitions: src})
	if !c.Ready(t.Context(), 1) {
		t.Fatal("a Lister without Ready is not ready")
	}
	l := readyLister{Source: src, ready: func(txid txn.TxID) bool { return txid%2 == 0 }}
	c, _ = spout.NewAllocator(spout.AllocatorConfig{Kind: spout.Opaque, Store: ownedStore(), Stream: stream, Fence: testFence, Partitions: l})
	if c.Ready(t.Context(), 1) || !c.Ready(t.Context(), 2) {
		t.Fatal("Ready does not ask the Lister")
	}
	if c.Kind() != spout.Opaque || spout.Opaque.String() != "opaque" || spout.Kind(9).String() != "kind(9)" {
		t.Fatal("kind names")
	}
}
