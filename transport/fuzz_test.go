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
// must survive a second encode and decode unchanged.
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
		msgs, err := newDecoder(nil).frame(body, nil)
		if err != nil {
			if !errors.Is(err, ErrBadFrame) {
				t.Fatalf("decode: %v is not ErrBadFrame", err)
			}
			return
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
