package state_test

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/squallstream/squall/state"
)

func TestKeyIntegerTypesAreOneKey(t *testing.T) {
	for _, n := range []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, -1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64, math.MaxInt64} {
		want := state.MustKey("k", n)
		others := []any{int(n)}
		if n >= math.MinInt32 && n <= math.MaxInt32 {
			others = append(others, int32(n))
		}
		if n >= math.MinInt16 && n <= math.MaxInt16 {
			others = append(others, int16(n))
		}
		if n >= 0 {
			others = append(others, uint64(n), uint(n))
			if n <= math.MaxUint32 {
				others = append(others, uint32(n))
			}
		}
		for _, o := range others {
			if k := state.MustKey("k", o); !k.Equal(want) {
				t.Errorf("key of %T(%v) = %x, want %x", o, o, k.Encoded(), want.Encoded())
			}
		}
	}
}

// The hand-written fast path must agree with msgpack's compact encoding,
// which encodes values the fast path does not handle (e.g. inside slices).
func TestKeyEncodingMatchesMsgpack(t *testing.T) {
	vals := []any{nil, true, false, "", "short", string(make([]byte, 40)), string(make([]byte, 300)), string(make([]byte, 70000)),
		[]byte{}, []byte("bin"), make([]byte, 300), make([]byte, 70000),
		int64(-1), int64(-40), int64(-200), int64(-40000), int64(-3e9), int64(5), int64(200), int64(40000), int64(3e9), uint64(math.MaxUint64),
		float32(1.5), 2.25, math.Inf(-1)}
	for _, v := range vals {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseCompactInts(true)
		if err := enc.Encode([]any{v}); err != nil {
			t.Fatal(err)
		}
		if got := state.MustKey(v).Encoded(); got != buf.String() {
			t.Errorf("key of %T: %x, msgpack %x", v, got[:min(len(got), 12)], buf.Bytes()[:min(buf.Len(), 12)])
		}
	}
}

func TestKeyDistinctions(t *testing.T) {
	distinct := []state.Key{
		state.MustKey(),
		state.MustKey(nil),
		state.MustKey(1),
		state.MustKey(1.0),
		state.MustKey(float32(1)),
		state.MustKey("1"),
		state.MustKey([]byte("1")),
		state.MustKey(true),
		state.MustKey(1, 2),
		state.MustKey([]int{1, 2}),
		state.MustKey("a", "b"),
		state.MustKey("ab"),
	}
	seen := map[string]int{}
	for i, k := range distinct {
		if j, ok := seen[k.Encoded()]; ok {
			t.Errorf("keys %v and %v have the same encoding", distinct[j], k)
		}
		seen[k.Encoded()] = i
	}
	if !(state.Key{}).Equal(state.MustKey()) {
		t.Error("the zero Key is not the empty key")
	}
}

type room string

type slot struct {
	Room room
	Hour int
}

func TestKeyOtherTypes(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	a := state.MustKey(room("r1"), slot{"r1", 10}, at, []string{"x", "y"})
	b := state.MustKey("r1", slot{"r1", 10}, at, []string{"x", "y"})
	if !a.Equal(b) {
		t.Error("a named string type is not the same key as its string")
	}
	if a.Equal(state.MustKey("r1", slot{"r1", 11}, at, []string{"x", "y"})) {
		t.Error("structs differing in a field are the same key")
	}
	if got := a.String(); got != "[r1 {r1 10} 2024-05-01 10:00:00 +0000 UTC [x y]]" {
		t.Errorf("String() = %q", got)
	}
	if a.Len() != 4 || a.Values()[0] != room("r1") {
		t.Errorf("Values() = %v", a.Values())
	}
}

func TestKeyRejectsUnstableValues(t *testing.T) {
	for _, v := range []any{map[string]int{"a": 1}, []map[int]int{{1: 1}}, make(chan int), func() {}, struct{ M map[string]bool }{}} {
		if _, err := state.NewKey("ok", v); !errors.Is(err, state.ErrBadKey) {
			t.Errorf("NewKey(%T): %v, want ErrBadKey", v, err)
		}
	}
}

func TestDecodeKeyRoundTrip(t *testing.T) {
	for _, k := range []state.Key{
		state.MustKey(),
		state.MustKey("room", 7, int64(-3), uint64(1<<63), 2.5, float32(0.5), true, nil, []byte{1, 2}),
	} {
		got, err := state.DecodeKey([]byte(k.Encoded()))
		if err != nil {
			t.Fatalf("DecodeKey(%v): %v", k, err)
		}
		if !got.Equal(k) {
			t.Errorf("DecodeKey(%v) = %v", k, got)
		}
	}
	for _, bad := range [][]byte{nil, {0xc1}, {0x91}, {0x92, 0x01}, {0x91, 0xd0, 0x05}} {
		if _, err := state.DecodeKey(bad); !errors.Is(err, state.ErrBadKey) {
			t.Errorf("DecodeKey(%x): %v, want ErrBadKey", bad, err)
		}
	}
}
