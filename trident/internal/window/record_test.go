package window

import (
	"math"
	"reflect"
	"testing"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []Record{
		{State: Initial()},
		{State: State{Watermark: math.MaxInt64 - 1, Seen: 7, Late: 2, Items: items(-3, 5, 1<<40)},
			Fired: [][]byte{[]byte("x"), {}, []byte("yz")}},
	} {
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Fired) > 0 && !reflect.DeepEqual(got, r) {
			t.Errorf("round trip: got %+v, want %+v", got, r)
		}
		if got.State.Watermark != r.State.Watermark || len(got.State.Items) != len(r.State.Items) {
			t.Errorf("round trip: got %+v, want %+v", got, r)
		}
	}
	if _, err := UnmarshalRecord([]byte{0x93, 0x02, 0x00, 0x00}); err == nil {
		t.Error("a record of another version decoded")
	}
	if _, err := UnmarshalRecord([]byte{0xc1}); err == nil {
		t.Error("garbage decoded")
	}
}
