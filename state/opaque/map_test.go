package opaque_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/txn"
)

func TestMapStormTable(t *testing.T) {
	statetest.TestOpaqueMapTable(t, state.NewMemory(""))
}

func TestMapStormTableOverLRU(t *testing.T) {
	l, err := state.NewLRU[[]byte](state.NewMemory(""), 1)
	if err != nil {
		t.Fatal(err)
	}
	statetest.TestOpaqueMapTable(t, l)
}

func TestMapModel(t *testing.T) {
	statetest.TestOpaqueModel(t, state.NewMemory(""))
}

// fixture is an opaque map of int64 counts over a memory map.
type fixture struct {
	t   *testing.T
	ctx context.Context
	mem *state.Memory
	m   *opaque.Map[int64]
}

func newFixture(t *testing.T) *fixture {
	mem := state.NewMemory("counts")
	return &fixture{t: t, ctx: context.Background(), mem: mem, m: opaque.New(mem, state.MapOptions[int64]{})}
}

func (f *fixture) begin(tx txn.TxID) {
	f.t.Helper()
	if err := f.m.BeginCommit(f.ctx, tx); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) commit(tx txn.TxID) {
	f.t.Helper()
	if err := f.m.Commit(f.ctx, tx); err != nil {
		f.t.Fatal(err)
	}
}

// stored decodes what the backing map holds for key.
func (f *fixture) stored(key state.Key) opaque.Value[int64] {
	f.t.Helper()
	es, err := f.mem.MultiGet(f.ctx, []state.Key{key})
	if err != nil || !es[0].Found {
		f.t.Fatalf("stored %v: %+v, %v", key, es, err)
	}
	v, err := opaque.Decode[int64](es[0].Val, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) putRaw(key state.Key, raw []byte) {
	f.t.Helper()
	if err := f.mem.MultiPut(f.ctx, []state.Key{key}, [][]byte{raw}); err != nil {
		f.t.Fatal(err)
	}
}

func TestMapWritesEveryTouchedKeyWithTxID(t *testing.T) {
	f := newFixture(t)
	a, b, c := state.MustKey("a"), state.MustKey("b"), state.MustKey("c")
	f.begin(1)
	if _, err := f.m.MultiUpdate(f.ctx, []state.Key{a, b}, []state.ValueUpdater[int64]{statetest.Add(1), statetest.Add(1)}); err != nil {
		t.Fatal(err)
	}
	f.commit(1)
	f.begin(2)
	// An updater that returns the old value unchanged still writes txid 2.
	same := state.ValueUpdaterFunc[int64](func(old int64, _ bool) int64 { return old })
	if _, err := f.m.MultiUpdate(f.ctx, []state.Key{a}, []state.ValueUpdater[int64]{same}); err != nil {
		t.Fatal(err)
	}
	if err := f.m.MultiPut(f.ctx, []state.Key{c}, []int64{7}); err != nil {
		t.Fatal(err)
	}
	f.commit(2)
	if v := f.stored(a); v != (opaque.Value[int64]{TxID: 2, Curr: 1, Prev: 1, HasPrev: true}) {
		t.Errorf("a = %+v", v)
	}
	if v := f.stored(b); v != (opaque.Value[int64]{TxID: 1, Curr: 1}) {
		t.Errorf("b (untouched by txid 2) = %+v", v)
	}
	if v := f.stored(c); v != (opaque.Value[int64]{TxID: 2, Curr: 7}) {
		t.Errorf("c = %+v", v)
	}
}

func TestMapDuplicateKeysInOneCall(t *testing.T) {
	f := newFixture(t)
	a := state.MustKey("a")
	f.begin(1)
	vs, err := f.m.MultiUpdate(f.ctx, []state.Key{a, state.MustKey("b"), a}, []state.ValueUpdater[int64]{statetest.Add(1), statetest.Add(5), statetest.Add(2)})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0] != 1 || vs[1] != 5 || vs[2] != 3 {
		t.Errorf("new values = %v, want [1 5 3]", vs)
	}
	f.commit(1)
	if v := f.stored(a); v != (opaque.Value[int64]{TxID: 1, Curr: 3}) {
		t.Errorf("a = %+v", v)
	}
}

// A batch whose write stored only part of its keys, replayed with other
// content, ends exact.
func TestMapReplayAfterPartialPut(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	fm := statetest.NewFaultMap[[]byte](mem, nil)
	m := opaque.New(fm, state.MapOptions[int64]{})
	a, b := state.MustKey("a"), state.MustKey("b")
	both := []state.Key{a, b}

	m.BeginCommit(ctx, 1)
	m.MultiUpdate(ctx, both, []state.ValueUpdater[int64]{statetest.Add(10), statetest.Add(20)})
	m.Commit(ctx, 1)

	m.BeginCommit(ctx, 2)
	fm.FailNext(statetest.OpPut, statetest.Retryable(1)) // a is written, b is not
	_, err := m.MultiUpdate(ctx, both, []state.ValueUpdater[int64]{statetest.Add(1), statetest.Add(2)})
	var me *state.MapError
	if !errors.As(err, &me) || me.Op != "put" || me.Keys != 2 || !failure.IsRetryable(err) {
		t.Fatalf("MultiUpdate with a failing put: %v", err)
	}
	// The replay carries other content: +3 for a, +4 for b.
	m.BeginCommit(ctx, 2)
	vs, err := m.MultiUpdate(ctx, both, []state.ValueUpdater[int64]{statetest.Add(3), statetest.Add(4)})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0] != 13 || vs[1] != 24 {
		t.Errorf("replay = %v, want [13 24]", vs)
	}
	m.Commit(ctx, 2)
}

func TestMapOutsideCommit(t *testing.T) {
	f := newFixture(t)
	a := []state.Key{state.MustKey("a")}
	if _, err := f.m.MultiUpdate(f.ctx, a, []state.ValueUpdater[int64]{statetest.Add(1)}); !errors.Is(err, state.ErrNoTxID) {
		t.Errorf("MultiUpdate outside a commit: %v, want ErrNoTxID", err)
	}
	if err := f.m.MultiPut(f.ctx, a, []int64{1}); !errors.Is(err, state.ErrNoTxID) {
		t.Errorf("MultiPut outside a commit: %v, want ErrNoTxID", err)
	}
	if err := f.m.BeginCommit(f.ctx, 0); !errors.Is(err, state.ErrNoTxID) {
		t.Errorf("BeginCommit(0): %v, want ErrNoTxID", err)
	}
	f.begin(3)
	if err := f.m.Commit(f.ctx, 4); !errors.Is(err, state.ErrNotBegun) {
		t.Errorf("Commit(4) after BeginCommit(3): %v, want ErrNotBegun", err)
	}
	if _, err := f.m.MultiUpdate(f.ctx, a, nil); !errors.Is(err, state.ErrLength) {
		t.Errorf("MultiUpdate without updaters: %v, want ErrLength", err)
	}
	if err := f.m.MultiPut(f.ctx, a, nil); !errors.Is(err, state.ErrLength) {
		t.Errorf("MultiPut without values: %v, want ErrLength", err)
	}
}

// A stored txid ahead of the batch is an error, never an overwrite.
func TestMapBehindIsFatalAndWritesNothing(t *testing.T) {
	f := newFixture(t)
	a, b := state.MustKey("a"), state.MustKey("b")
	raw, _ := opaque.Encode(opaque.Value[int64]{TxID: 8, Curr: 100}, nil)
	f.putRaw(a, raw)
	f.begin(7)
	_, err := f.m.MultiUpdate(f.ctx, []state.Key{b, a}, []state.ValueUpdater[int64]{statetest.Add(1), statetest.Add(1)})
	var be *state.BehindError
	if !errors.As(err, &be) || be.Batch != 7 || be.Stored != 8 || !be.Key.Equal(a) || be.Map != "counts" {
		t.Fatalf("MultiUpdate: %v, want a BehindError for key a", err)
	}
	if failure.IsRetryable(err) {
		t.Error("a batch behind the store is retryable; it must be fatal")
	}
	if !strings.Contains(err.Error(), "[a]") {
		t.Errorf("error %q does not name the key", err)
	}
	if f.mem.Len() != 1 || f.stored(a).Curr != 100 {
		t.Error("the failed call wrote to the store")
	}
	if _, err := f.m.MultiGet(f.ctx, []state.Key{a}); !errors.Is(err, state.ErrBehind) {
		t.Errorf("MultiGet: %v, want ErrBehind", err)
	}
	if err := f.m.MultiPut(f.ctx, []state.Key{a}, []int64{1}); !errors.Is(err, state.ErrBehind) {
		t.Errorf("MultiPut: %v, want ErrBehind", err)
	}
}

// A stored value that cannot be decoded is a reported error naming the
// key, never an absent value.
func TestMapUndecodableValue(t *testing.T) {
	txRaw := []byte{0x93, 0x21, 0x01, 0x05} // a transactional envelope
	strRaw, _ := opaque.Encode(opaque.Value[string]{TxID: 1, Curr: "not a number"}, nil)
	cases := map[string][]byte{
		"garbage":          []byte("{json?}"),
		"empty":            {},
		"truncated":        {0x94, 0x11, 0x01},
		"other kind":       txRaw,
		"future version":   {0x93, 0x12, 0x01, 0x05},
		"trailing bytes":   {0x93, 0x11, 0x01, 0x05, 0x00},
		"wrong value type": strRaw,
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			bad := state.MustKey("room-7", 14)
			f.putRaw(bad, raw)
			check := func(op string, err error) {
				t.Helper()
				var de *state.DecodeError
				if !errors.Is(err, state.ErrCorrupt) || !errors.As(err, &de) || !de.Key.Equal(bad) || de.Map != "counts" {
					t.Fatalf("%s: %v, want a DecodeError for the key", op, err)
				}
				if !failure.IsReported(err) {
					t.Errorf("%s: %v is not a reported failure", op, err)
				}
				if !strings.Contains(err.Error(), "[room-7 14]") || !strings.Contains(err.Error(), "counts") {
					t.Errorf("%s: %q does not name the map and key", op, err)
				}
			}
			_, err := f.m.MultiGet(f.ctx, []state.Key{state.MustKey("ok"), bad})
			check("MultiGet outside a commit", err)
			f.begin(2)
			_, err = f.m.MultiGet(f.ctx, []state.Key{bad})
			check("MultiGet", err)
			_, err = f.m.MultiUpdate(f.ctx, []state.Key{bad}, []state.ValueUpdater[int64]{statetest.Add(1)})
			check("MultiUpdate", err)
		})
	}
}

func TestMapBackingErrorsHaveContext(t *testing.T) {
	ctx := context.Background()
	fm := statetest.NewFaultMap[[]byte](state.NewMemory("rooms"), nil)
	m := opaque.New(fm, state.MapOptions[int64]{})
	keys := []state.Key{state.MustKey("a"), state.MustKey("b"), state.MustKey("c")}
	ups := []state.ValueUpdater[int64]{statetest.Add(1), statetest.Add(1), statetest.Add(1)}
	m.BeginCommit(ctx, 1)

	fm.FailNext(statetest.OpGet, statetest.Fault{Err: context.DeadlineExceeded})
	_, err := m.MultiUpdate(ctx, keys, ups)
	var me *state.MapError
	if !errors.As(err, &me) || me.Map != "rooms" || me.Op != "get" || me.Keys != 3 {
		t.Fatalf("get failure: %v, want a MapError naming the map, op and key count", err)
	}
	if !failure.IsRetryable(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a deadline from the store is not retryable: %v", err)
	}
	if got := err.Error(); got != "state: rooms: get of 3 keys: context deadline exceeded" {
		t.Errorf("message %q", got)
	}

	boom := errors.New("disk on fire")
	fm.FailNext(statetest.OpPut, statetest.Fault{Err: boom})
	_, err = m.MultiUpdate(ctx, keys, ups)
	if !errors.As(err, &me) || me.Op != "put" || !errors.Is(err, boom) || failure.IsRetryable(err) {
		t.Errorf("unclassified put failure: %v, want a fatal MapError", err)
	}
}

func TestMapCustomCodecAndName(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	m := opaque.New(mem, state.MapOptions[string]{Name: "labels", Codec: badCodec{}})
	m.BeginCommit(ctx, 1)
	err := m.MultiPut(ctx, []state.Key{state.MustKey("a")}, []string{"x"})
	if !errors.Is(err, state.ErrBadValue) || mem.Len() != 0 {
		t.Errorf("a codec producing non-msgpack bytes: %v (stored %d)", err, mem.Len())
	}
}

// badCodec returns bytes that are not one msgpack value.
type badCodec struct{}

func (badCodec) Marshal(s string) ([]byte, error)   { return []byte{0x92, 0x01}, nil }
func (badCodec) Unmarshal(b []byte) (string, error) { return string(b), nil }

func TestGlobalOverOpaque(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory("")
	g := state.NewGlobal[int64](opaque.New(mem, state.MapOptions[int64]{}), state.Key{})
	if _, ok, err := g.Get(ctx); ok || err != nil {
		t.Fatalf("empty Get: %v, %v", ok, err)
	}
	g.BeginCommit(ctx, 1)
	if v, err := g.Update(ctx, statetest.Add(5)); v != 5 || err != nil {
		t.Fatalf("Update = %d, %v", v, err)
	}
	g.Commit(ctx, 1)
	g.BeginCommit(ctx, 1) // replay
	if v, err := g.Update(ctx, statetest.Add(7)); v != 7 || err != nil {
		t.Fatalf("replayed Update = %d, %v", v, err)
	}
	g.Commit(ctx, 1)
	g.BeginCommit(ctx, 2)
	if err := g.Set(ctx, 40); err != nil {
		t.Fatal(err)
	}
	if v, err := g.Update(ctx, statetest.Add(2)); v != 42 || err != nil {
		t.Fatalf("Update after Set = %d, %v", v, err)
	}
	g.Commit(ctx, 2)
	if v, ok, err := g.Get(ctx); v != 42 || !ok || err != nil {
		t.Errorf("Get = %d, %v, %v", v, ok, err)
	}
	es, _ := mem.MultiGet(ctx, []state.Key{state.GlobalKey()})
	if !es[0].Found {
		t.Error("Global did not store under GlobalKey()")
	}
}
