package keyenc

import (
	"bytes"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"pgregory.net/rapid"
)

// reference is the encoding of v by msgpack's own encoder.
func reference(t *rapid.T, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFastPathsMatchMsgpack: the hand-written encodings of scalars and
// times are byte for byte what msgpack writes, so a value encodes the same
// whether it takes a fast path or goes through msgpack (inside a slice or
// a struct).
func TestFastPathsMatchMsgpack(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var v any
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0:
			v = rapid.Int64().Draw(t, "int")
		case 1:
			v = rapid.Uint64().Draw(t, "uint")
		case 2:
			v = rapid.String().Draw(t, "string")
		case 3:
			v = rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "bytes")
		case 4:
			v = rapid.Float64().Draw(t, "float")
		case 5:
			v = rapid.Int8().Draw(t, "int8")
		case 6:
			v = rapid.Float32().Draw(t, "float32")
		case 7:
			v = rapid.Bool().Draw(t, "bool")
		default:
			secs := rapid.OneOf(rapid.Int64Range(-1<<40, 1<<40), rapid.Int64Range(0, 1<<34+5)).Draw(t, "secs")
			tm := time.Unix(secs, rapid.Int64Range(0, 999_999_999).Draw(t, "nsec"))
			if rapid.Bool().Draw(t, "zero nsec") {
				tm = time.Unix(secs, 0)
			}
			v = tm.In(time.FixedZone("Z", 3600*rapid.IntRange(-12, 14).Draw(t, "zone")))
		}
		got, err := Append(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(t, v); !bytes.Equal(got, want) {
			t.Fatalf("%#v: encoded % x, msgpack writes % x", v, got, want)
		}
	})
}

func TestRejectsUnstable(t *testing.T) {
	for _, v := range []any{map[string]int{"a": 1}, []any{make(chan int)}, func() {}, complex(1, 2), struct{ M map[int]int }{}} {
		if _, err := Append(nil, v); err == nil {
			t.Errorf("%T encoded; want an error", v)
		}
	}
}
