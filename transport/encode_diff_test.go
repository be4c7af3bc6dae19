package transport

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/acker"
)

// refFrame encodes msgs as one frame with the msgpack-library encoder.
func refFrame(types *Types, msgs []Message) ([]byte, error) {
	e := newRefEncoder(types)
	e.w.b = make([]byte, frameHeader)
	for i := range msgs {
		if err := e.message(&msgs[i]); err != nil {
			return nil, err
		}
	}
	putFrameHeader(e.w.b, len(msgs), len(e.w.b)-frameHeader)
	return e.w.b, nil
}

// sameAsMsgpack encodes msgs with both encoders and fails unless they
// write the same bytes or fail alike. Maps of more than one entry are
// written in Go's random iteration order, so for those only what the
// bytes decode to is compared.
func sameAsMsgpack(t *testing.T, types *Types, msgs []Message) {
	t.Helper()
	got, err := appendFrame(newEncoder(types), nil, msgs)
	want, wantErr := refFrame(types, msgs)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("error %v, msgpack encoder's %v", err, wantErr)
	}
	if err != nil || bytes.Equal(got, want) {
		return
	}
	for i := range msgs {
		if hasLargeMap(msgs[i].Values) {
			a, errA := newDecoder(types).frame(got[lenPrefix:], nil)
			b, errB := newDecoder(types).frame(want[lenPrefix:], nil)
			if errA != nil || errB != nil || len(got) != len(want) || fmt.Sprintf("%#v", a) != fmt.Sprintf("%#v", b) {
				t.Fatalf("maps: the encodings decode differently (%v, %v)", errA, errB)
			}
			return
		}
	}
	t.Fatalf("encoded\n% x\nmsgpack encoder:\n% x", got, want)
}

func hasLargeMap(vs []any) bool {
	for _, v := range vs {
		switch x := v.(type) {
		case []any:
			if hasLargeMap(x) {
				return true
			}
		case map[string]any:
			if len(x) > 1 {
				return true
			}
			for _, el := range x {
				if hasLargeMap([]any{el}) {
					return true
				}
			}
		}
	}
	return false
}

func TestEncodeSameAsMsgpack(t *testing.T) {
	types := pointTypes(t)
	var vals []any
	for _, n := range []int64{0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64} {
		vals = append(vals, int(n), int(-n), int(-n-1), int64(n), int32(n), uint(n), uint64(n))
	}
	for _, n := range []int{0, 1, 15, 16, 31, 32, 255, 256, 65535, 65536} {
		vals = append(vals, strings.Repeat("x", n), bytes.Repeat([]byte{1}, n),
			make([]any, n), point{int32(n), 1})
	}
	for _, ts := range []time.Time{time.Unix(0, 0), time.Unix(1<<32-1, 0), time.Unix(1<<32, 0),
		time.Unix(1<<34-1, 999999999), time.Unix(1<<34, 0), time.Unix(-1, 5), time.Unix(1, 1)} {
		vals = append(vals, ts.UTC(), ts.In(time.FixedZone("x", 3600)))
	}
	vals = append(vals, everyValue()...)
	vals = append(vals, float32(math.NaN()), math.NaN(), math.Copysign(0, -1), []byte(nil),
		[]any(nil), map[string]any(nil), map[string]any{"k": map[string]any{"": []any{point{}}}})
	msgs := []Message{
		{Kind: KindTuple, Task: 3, Stream: "default", Source: -7, Values: vals,
			Anchors: []Anchor{{Root: 1, Edge: math.MaxUint64}, {Root: math.MaxUint64, Edge: 0}}},
		{Kind: KindTuple, Task: math.MaxInt32, Stream: strings.Repeat("s", 40), Source: math.MinInt32},
		{Kind: KindInit, Task: 1, Root: 1 << 40, XOR: 300, Source: 5},
		{Kind: KindAck, Task: 70000, Root: 3, XOR: 1 << 63},
		{Kind: KindFail, Task: 1, Root: 200},
		{Kind: KindReset, Task: 0, Root: 0},
		{Kind: KindOutcome, Task: 1, Root: 3, Status: acker.TimedOut},
	}
	sameAsMsgpack(t, types, msgs)
	for i, v := range vals {
		sameAsMsgpack(t, types, []Message{{Kind: KindTuple, Task: TaskID(i), Values: []any{v}}})
	}
	type roomID string
	sameAsMsgpack(t, types, []Message{{Kind: KindTuple, Values: []any{1, roomID("r")}}})
	sameAsMsgpack(t, types, []Message{{Kind: 99}})
}

// FuzzEncodeSameAsMsgpack decodes arbitrary frame bodies and encodes
// whatever decodes with the encoder and with the msgpack-library encoder
// it replaced (refEncoder): both must write the same bytes.
func FuzzEncodeSameAsMsgpack(f *testing.F) {
	types := pointTypes(f)
	// Small seeds only: the fuzzer minimizes every input that finds new
	// coverage, which for the 170 KB seed of fuzzSeeds takes minutes.
	for _, seed := range fuzzSeeds(f) {
		if len(seed) >= lenPrefix && len(seed) <= 4096 {
			f.Add(seed[lenPrefix:])
		}
	}
	var small []any
	for _, v := range everyValue() {
		if s, ok := v.(string); ok && len(s) > 100 {
			v = s[:40]
		}
		if b, ok := v.([]byte); ok && len(b) > 100 {
			v = b[:300]
		}
		small = append(small, v)
	}
	frame, err := appendFrame(newEncoder(types), nil, []Message{
		{Kind: KindTuple, Task: 7, Stream: "$batch", Source: 2, Values: small, Anchors: []Anchor{{Root: 1, Edge: 2}}},
		{Kind: KindTuple, Task: 1, Values: []any{point{1, 2}, map[string]any{"p": point{3, 4}}}},
		{Kind: KindInit, Task: 1, Root: 3, XOR: 4, Source: 5},
		{Kind: KindOutcome, Task: 1, Root: 3, Status: acker.Completed},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(frame[lenPrefix:])
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, err := newDecoder(types).frame(body, nil)
		if err != nil {
			return
		}
		sameAsMsgpack(t, types, msgs)
	})
}
