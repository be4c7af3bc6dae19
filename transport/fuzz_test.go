package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/squallstream/squall/acker"
)

// FuzzDecodeFrame feeds arbitrary bytes to the frame reader and decoder,
// as a hostile or corrupt peer would. They must never panic, must reject
// bad input with a FrameError (or a short read), and whatever they accept
// must be within its budget, counted by the encoder at least as the
// decoder charged it, and survive a second encode and decode unchanged.
func FuzzDecodeFrame(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	const max = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := readFrame(bytes.NewReader(data), nil, max)
		if err != nil {
			var fe *FrameError
			if !errors.As(err, &fe) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("read: unexpected error %v", err)
			}
			return
		}
		dec := newDecoder(nil)
		msgs, err := dec.frame(body, nil)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) && !errors.Is(err, ErrOverBudget) {
				t.Fatalf("decode: %v is not ErrBadFrame or ErrOverBudget", err)
			}
			return
		}
		if budget := FrameBudget(len(body)); dec.charged > budget {
			t.Fatalf("accepted a frame charged %d, over its budget %d", dec.charged, budget)
		}
		enc := newEncoder(nil)
		if _, err := appendFrame(enc, nil, msgs); err != nil {
			t.Fatal(err)
		}
		if enc.cost < dec.charged {
			t.Fatalf("the encoder counts %d for what the decoder charged %d", enc.cost, dec.charged)
		}
		again := roundTrip(t, nil, msgs)
		if a, b := fmt.Sprintf("%#v", msgs), fmt.Sprintf("%#v", again); a != b {
			t.Fatalf("re-encoding changed the messages:\n%s\n%s", a, b)
		}
	})
}

func fuzzSeeds(t testing.TB) [][]byte {
	enc := newEncoder(nil)
	frame := func(msgs ...Message) []byte {
		b, err := appendFrame(enc, nil, msgs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	everyKind := frame(
		Message{Kind: KindTuple, Task: 7, Stream: "$batch", Source: 2, Values: everyValue()[:40],
			Anchors: []Anchor{{Root: 1, Edge: 2}}},
		Message{Kind: KindInit, Task: 1, Root: 3, XOR: 4, Source: 5},
		Message{Kind: KindAck, Task: 1, Root: 3, XOR: 4},
		Message{Kind: KindFail, Task: 1, Root: 3},
		Message{Kind: KindReset, Task: 1, Root: 3},
		Message{Kind: KindOutcome, Task: 1, Root: 3, Status: acker.Completed},
	)
	small := frame(tuple(1, 2), tuple(2, 3))
	nested := frame(Message{Kind: KindTuple, Values: []any{[]any{map[string]any{"a": []any{int8(1), uint64(2)}}}}})
	return [][]byte{
		everyKind, small, nested,
		small[:len(small)/2], // truncated
		{},
		{0, 0, 0, 0},
		{0xff, 0xff, 0xff, 0xff},
		append(binary.BigEndian.AppendUint32(nil, 1), 0x90), // no messages
		append(binary.BigEndian.AppendUint32(nil, 3), 0x91, 0x93, 0x04),
		append(binary.BigEndian.AppendUint32(nil, 9), 0x91, 0x96, 1, 1, 0xdb, 0xff, 0xff, 0xff, 0xff),           // a 4 GiB stream name
		append(binary.BigEndian.AppendUint32(nil, 11), 0x91, 0x96, 1, 1, 0xa0, 1, 0x90, 0x91, 0xc9, 0x7f, 0xff), // a short ext32 header
	}
}

// TestFuzzSeedsDecode keeps the seed corpus honest: the valid seeds
// decode.
func TestFuzzSeedsDecode(t *testing.T) {
	for i, s := range fuzzSeeds(t)[:3] {
		body, err := readFrame(bytes.NewReader(s), nil, len(s))
		if err == nil {
			_, err = newDecoder(nil).frame(body, nil)
		}
		if err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// FuzzDecodeSameAsMsgpack decodes arbitrary frame bodies with the
// decoder and with the msgpack-library decoder it replaced (refDecoder):
// both must reject the same bodies, after the same number of messages,
// and decode the others to the same messages.
func FuzzDecodeSameAsMsgpack(f *testing.F) {
	types := pointTypes(f)
	for _, seed := range fuzzSeeds(f) {
		if len(seed) >= lenPrefix {
			f.Add(seed[lenPrefix:])
		}
	}
	withPoint, err := appendFrame(newEncoder(types), nil, []Message{{Kind: KindTuple, Stream: "s",
		Values: []any{point{1, 2}, []any{point{3, 4}}, map[string]any{"p": point{5, 6}}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(withPoint[lenPrefix:])
	for _, body := range [][]byte{
		{0x91, 0x93, 0x04, 0xc0, 0xc0},                                  // fail with nil task and root
		{0x91, 0x93, 0x04, 0xd0, 0x80, 0xd3, 0xff, 0, 0, 0, 0, 0, 0, 0}, // int8 task, int64 root
		{0x91, 0x94, 0x06, 0x01, 0x02, 0xcd, 0x01, 0x00},                // status 256
		{0xdc, 0x00, 0x01, 0x93, 0x05, 0xce, 0x80, 0, 0, 0, 0xcf, 1, 2, 3, 4, 5, 6, 7, 8},
		{0x91, 0x96, 0x01, 0x00, 0xd9, 0x01, 'x', 0x00, 0xc0, 0x90}, // nil anchor array
		{0x91, 0x96, 0x01, 0x00, 0xc4, 0x00, 0x00, 0x90, 0x90},      // bin stream name
		{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0x93, 0xc3, 0xc2, 0xc0},
		{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0x91, 0xd6, 0xff, 0, 0, 0, 1},             // timestamp 32
		{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0x91, 0xd5, 0x01, 0x01, 0x80},             // sized int8
		{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0x91, 0xc7, 0x02, 0x14, 0x01, 0x02},       // point in ext8
		{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0x91, 0x81, 0xa1, 'k', 0xca, 0, 0, 0, 0},  // map of a float32
		{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0x91, 0xde, 0x00, 0x01, 0xc4, 0x00, 0x00}, // map with a bin key
		{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0x91, 0xc1},                               // never-used code
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, ts := range []*Types{nil, types} {
			want, wantErr := newRefDecoder(ts).frame(body, nil)
			got, err := newDecoder(ts).frame(body, nil)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("types %v: error %v, msgpack decoder's %v", ts != nil, err, wantErr)
			}
			var fe *FrameError
			if err != nil && (!errors.As(err, &fe) || !errors.Is(err, ErrBadFrame)) {
				t.Fatalf("error %v is not a FrameError of ErrBadFrame", err)
			}
			if len(got) == 0 && len(want) == 0 {
				continue // nil or empty: no messages either way
			}
			if a, b := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); a != b {
				t.Fatalf("types %v: decoded\n%s\nmsgpack decoder:\n%s", ts != nil, a, b)
			}
		}
	})
}

// pointTypes registers point (see TestRegisteredTypes) as extension 20.
func pointTypes(t testing.TB) *Types {
	var ts Types
	err := Register(&ts, 20, func(b []byte, p point) ([]byte, error) {
		return append(b, byte(p.X), byte(p.Y)), nil
	}, func(b []byte) (point, error) {
		if len(b) != 2 {
			return point{}, errors.New("bad point")
		}
		return point{int32(b[0]), int32(b[1])}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &ts
}
