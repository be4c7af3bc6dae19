package wire

import (
	"bytes"
	"math"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/squallstream/squall/internal/keyenc"
)

// msgpackLen measures the first value of b with the msgpack library.
func msgpackLen(b []byte) (int, error) {
	r := bytes.NewReader(b)
	dec := msgpack.NewDecoder(r)
	if err := dec.Skip(); err != nil {
		return 0, err
	}
	return len(b) - r.Len(), nil
}

func seeds() [][]byte {
	var out [][]byte
	for _, v := range []any{
		nil, true, 1, -1, 200, -200, 70000, -70000, int64(math.MinInt64), uint64(math.MaxUint64),
		float32(1.5), 2.5, "", "s", string(make([]byte, 40)), string(make([]byte, 300)), string(make([]byte, 70000)),
		[]byte{1}, make([]byte, 300), make([]byte, 70000),
		[]any{1, "a", []any{nil}}, make([]any, 20), make([]any, 70000),
		map[string]any{"a": 1, "b": []any{2}}, map[string]int{}, func() map[int]int {
			m := map[int]int{}
			for i := range 20 {
				m[i] = i
			}
			return m
		}(),
		msgpack.RawMessage{0xd4, 0x01, 0x02}, msgpack.RawMessage{0xc7, 0x02, 0x05, 0x00, 0x00},
	} {
		b, err := msgpack.Marshal(v)
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	return out
}

func TestValueLenMatchesMsgpack(t *testing.T) {
	for _, b := range seeds() {
		want, err := msgpackLen(b)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ValueLen(append(b, 0x01, 0x02)); err != nil || got != want {
			t.Errorf("ValueLen(%x…) = %d, %v; want %d", b[:min(len(b), 8)], got, err, want)
		}
		for cut := range min(len(b), 50) {
			if _, err := ValueLen(b[:cut]); err == nil {
				t.Errorf("ValueLen of %x cut at %d succeeded", b[:min(len(b), 8)], cut)
			}
		}
	}
	if _, err := ValueLen([]byte{0xc1}); err == nil {
		t.Error("ValueLen accepted the never-used code 0xc1")
	}
	deep := bytes.Repeat([]byte{0x91}, maxDepth+2)
	if _, err := ValueLen(append(deep, 0x01)); err == nil {
		t.Error("ValueLen accepted a value nested too deeply")
	}
}

func FuzzValueLen(f *testing.F) {
	for _, b := range seeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ValueLen(b)
		want, werr := msgpackLen(b)
		if err == nil && (werr != nil || got != want) {
			t.Errorf("ValueLen(%x) = %d; msgpack: %d, %v", b, got, want, werr)
		}
		if err != nil && werr == nil && bytes.Count(b, []byte{0x91}) < maxDepth {
			t.Errorf("ValueLen(%x): %v; msgpack measured %d", b, err, want)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	for _, n := range []int64{0, 1, -1, 127, 128, -32, -33, 255, 256, 1 << 40, math.MinInt64, math.MaxInt64} {
		f.Add(keyenc.AppendInt(nil, n))
	}
	f.Add([]byte{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := ParseInt(b)
		if !ok {
			return
		}
		var want int64
		if err := msgpack.Unmarshal(b, &want); err != nil || want != n {
			t.Errorf("ParseInt(%x) = %d; msgpack %d, %v", b, n, want, err)
		}
		if l, err := ValueLen(b); err != nil || l != len(b) {
			t.Errorf("ParseInt accepted %x, which is not exactly one value", b)
		}
	})
}
