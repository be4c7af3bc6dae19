package transport

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/acker"
)

// everyValue holds one value of every type the wire format carries, with
// the edges of each range.
func everyValue() []any {
	return []any{
		nil, true, false,
		"", "word", strings.Repeat("long ", 20000),
		0, 1, -1, 127, 128, -33, math.MaxInt, math.MinInt,
		int8(-128), int8(127), int16(math.MinInt16), int32(math.MaxInt32), int64(math.MinInt64), int64(5),
		uint(math.MaxUint), uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64), uint64(0),
		float32(1.5), float32(math.Inf(-1)), 0.0, math.Pi, math.Inf(1), math.MaxFloat64,
		[]byte{}, []byte{0, 1, 2, 255}, bytes.Repeat([]byte{7}, 70000),
		time.Date(2024, 3, 1, 12, 30, 0, 0, time.UTC),         // 4-byte timestamp
		time.Date(2024, 3, 1, 12, 30, 0, 123456789, time.UTC), // 8-byte timestamp
		time.Date(1960, 1, 1, 0, 0, 0, 1, time.UTC),           // 12-byte timestamp
		time.Date(2500, 1, 1, 0, 0, 0, 999999999, time.UTC),   // 12-byte timestamp
		[]any{}, []any{1, "a", []any{int64(2), []byte("b")}, nil},
		map[string]any{}, map[string]any{"k": 1, "nested": map[string]any{"x": []any{1.5}}},
	}
}

func roundTrip(t testing.TB, types *Types, msgs []Message) []Message {
	t.Helper()
	frame, err := appendFrame(newEncoder(types), nil, msgs)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	body, err := readFrame(bytes.NewReader(frame), nil, len(frame))
	if err != nil {
		t.Fatalf("read frame: %v", err)
	}
	got, err := newDecoder(types).frame(body, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return got
}

func TestRoundTripEveryValueType(t *testing.T) {
	vals := everyValue()
	msgs := []Message{{Kind: KindTuple, Task: 3, Stream: "default", Source: 1, Values: vals}}
	for i, v := range vals { // each value alone too, so one type cannot hide another
		msgs = append(msgs, Message{Kind: KindTuple, Task: TaskID(i), Stream: "s", Values: []any{v}})
	}
	got := roundTrip(t, nil, msgs)
	if len(got) != len(msgs) {
		t.Fatalf("%d messages back, want %d", len(got), len(msgs))
	}
	for i := range msgs {
		if !reflect.DeepEqual(got[i], msgs[i]) {
			t.Errorf("message %d:\n got %#v\nwant %#v", i, got[i].Values, msgs[i].Values)
		}
	}
}

func TestRoundTripNilsBecomeEmpty(t *testing.T) {
	got := roundTrip(t, nil, []Message{{Kind: KindTuple, Values: []any{[]byte(nil), []any(nil), map[string]any(nil)}}})
	want := []any{[]byte{}, []any{}, map[string]any{}}
	if !reflect.DeepEqual(got[0].Values, want) {
		t.Fatalf("got %#v, want %#v", got[0].Values, want)
	}
}

func TestRoundTripTimeKeepsTheInstant(t *testing.T) {
	zone := time.FixedZone("X", 3*3600)
	in := time.Date(2024, 3, 1, 12, 30, 0, 5, zone)
	got := roundTrip(t, nil, []Message{{Kind: KindTuple, Values: []any{in, time.Now()}}})
	out := got[0].Values[0].(time.Time)
	if !out.Equal(in) || out.Location() != time.UTC {
		t.Fatalf("got %v, want %v in UTC", out, in)
	}
}

func TestRoundTripEveryKind(t *testing.T) {
	msgs := []Message{
		{Kind: KindTuple, Task: 7, Stream: "$batch", Source: 2, Values: []any{"w", 1, 2.5},
			Anchors: []Anchor{{Root: 1<<63 + 5, Edge: math.MaxUint64}, {Root: 9, Edge: 0}}},
		{Kind: KindTuple, Task: 0, Stream: "", Source: -1},
		{Kind: KindInit, Task: 1, Root: math.MaxUint64, XOR: 12345, Source: 4},
		{Kind: KindAck, Task: math.MaxInt32, Root: 1, XOR: 1 << 40},
		{Kind: KindFail, Task: 2, Root: 77},
		{Kind: KindReset, Task: 2, Root: 78},
		{Kind: KindOutcome, Task: math.MinInt32, Root: 79, Status: acker.TimedOut},
	}
	got := roundTrip(t, nil, msgs)
	msgs[1].Values = []any{} // an empty tuple arrives with empty, non-nil values
	if !reflect.DeepEqual(got, msgs) {
		t.Fatalf("got\n%#v\nwant\n%#v", got, msgs)
	}
}

type point struct{ X, Y int32 }

func TestRegisteredTypes(t *testing.T) {
	var ts Types
	enc := func(b []byte, p point) ([]byte, error) {
		return append(b, byte(p.X), byte(p.Y)), nil
	}
	dec := func(b []byte) (point, error) {
		if len(b) != 2 {
			return point{}, errors.New("bad point")
		}
		return point{int32(b[0]), int32(b[1])}, nil
	}
	if err := Register(&ts, 20, enc, dec); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []error{Register(&ts, 20, enc, dec), Register(&ts, 1, enc, dec),
		Register(&ts, 21, func(b []byte, v int64) ([]byte, error) { return b, nil }, func([]byte) (int64, error) { return 0, nil })} {
		if !errors.Is(bad, ErrInvalidConfig) {
			t.Errorf("want ErrInvalidConfig, got %v", bad)
		}
	}
	got := roundTrip(t, &ts, []Message{{Kind: KindTuple, Values: []any{point{3, 4}, []any{point{5, 6}}}}})
	if want := []any{point{3, 4}, []any{point{5, 6}}}; !reflect.DeepEqual(got[0].Values, want) {
		t.Fatalf("got %#v, want %#v", got[0].Values, want)
	}
	// A receiver without the type refuses the frame.
	frame, _ := appendFrame(newEncoder(&ts), nil, []Message{{Kind: KindTuple, Values: []any{point{}}}})
	if _, err := newDecoder(nil).frame(frame[lenPrefix:], nil); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("decoding an unregistered extension: %v", err)
	}
}

func TestUnsupportedValuesAreRefused(t *testing.T) {
	type roomID string
	cases := []struct {
		v    any
		path string
	}{
		{roomID("r1"), "values[1]"},
		{[]string{"a"}, "values[1]"},
		{[]any{1, map[string]any{"k": struct{}{}}}, `values[1][1]["k"]`},
		{map[int]any{}, "values[1]"},
		{&point{}, "values[1]"},
	}
	e := newEncoder(nil)
	for _, c := range cases {
		_, err := appendFrame(e, nil, []Message{{Kind: KindTuple, Values: []any{1, c.v}}})
		var ve *ValueError
		if !errors.As(err, &ve) || !errors.Is(err, ErrUnsupportedValue) || ve.Path != c.path {
			t.Errorf("%T: got %v, want a ValueError at %s", c.v, err, c.path)
		}
	}
	deep := any(1)
	for range maxDepth + 1 {
		deep = []any{deep}
	}
	if _, err := appendFrame(e, nil, []Message{{Kind: KindTuple, Values: []any{deep}}}); !errors.Is(err, ErrUnsupportedValue) {
		t.Errorf("a value nested %d deep: %v", maxDepth+1, err)
	}
	if _, err := appendFrame(e, nil, []Message{{Task: 1}}); err == nil {
		t.Error("a message without a kind was encoded")
	}
}

func TestDecodedMemoryIsFresh(t *testing.T) {
	frame, _ := appendFrame(newEncoder(nil), nil, []Message{
		{Kind: KindTuple, Values: []any{[]byte("abc"), "s"}, Anchors: []Anchor{{1, 2}}},
		{Kind: KindTuple, Values: []any{1}, Anchors: []Anchor{{3, 4}}},
	})
	body := frame[lenPrefix:]
	got, err := newDecoder(nil).frame(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	clear(body)
	if string(got[0].Values[0].([]byte)) != "abc" || got[0].Values[1] != "s" {
		t.Fatal("decoded values share the frame buffer")
	}
	// Appending to one message's slices must not write into the next's.
	_ = append(got[0].Values, "x")
	_ = append(got[0].Anchors, Anchor{})
	if got[1].Values[0] != 1 || got[1].Anchors[0] != (Anchor{3, 4}) {
		t.Fatal("messages of a frame share their slices' capacity")
	}
}
