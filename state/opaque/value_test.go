package opaque_test

import (
	"errors"
	"testing"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// Storm's StateTest.testOpaqueValue, verbatim.
func TestValueStormTable(t *testing.T) {
	ov := opaque.Value[string]{TxID: 8, Curr: "v1", Prev: "v0", HasPrev: true}

	for _, batch := range []txn.TxID{0, 100, 9} { // get(null), get(100), get(9)
		e, err := ov.Get(batch)
		if err != nil || !e.Found || e.Val != "v1" {
			t.Errorf("get(%v) = %+v, %v; want v1", batch, e, err)
		}
	}
	if e, err := ov.Get(8); err != nil || !e.Found || e.Val != "v0" {
		t.Errorf("get(8) = %+v, %v; want v0", e, err)
	}
	_, err := ov.Get(7)
	var be *state.BehindError
	if !errors.Is(err, state.ErrBehind) || !errors.As(err, &be) || be.Batch != 7 || be.Stored != 8 {
		t.Errorf("get(7) = %v; want a BehindError of batch 7 against 8", err)
	}

	up, err := ov.Update(8, "v2")
	if err != nil || up.TxID != 8 || up.Curr != "v2" || up.Prev != "v0" || !up.HasPrev {
		t.Errorf("update(8, v2) = %+v, %v; want {8 v2 v0}", up, err)
	}
	up, err = ov.Update(9, "v2")
	if err != nil || up.TxID != 9 || up.Curr != "v2" || up.Prev != "v1" || !up.HasPrev {
		t.Errorf("update(9, v2) = %+v, %v; want {9 v2 v1}", up, err)
	}
	if _, err := ov.Update(7, "v2"); !errors.Is(err, state.ErrBehind) {
		t.Errorf("update(7, v2) = %v; want ErrBehind", err)
	}
	if ov.Curr != "v1" || ov.Prev != "v0" || ov.TxID != 8 {
		t.Errorf("Update changed its receiver: %+v", ov)
	}
}

func TestValueAbsentPrev(t *testing.T) {
	v := opaque.First(3, 10)
	if e, err := v.Get(3); err != nil || e.Found {
		t.Errorf("replay of the first batch: Get = %+v, %v; want absent", e, err)
	}
	up, err := v.Update(3, 11)
	if err != nil || up.HasPrev || up.Curr != 11 {
		t.Errorf("replay update = %+v, %v; want {3 11 no prev}", up, err)
	}
	up, err = v.Update(4, 12)
	if err != nil || !up.HasPrev || up.Prev != 10 {
		t.Errorf("next batch update = %+v, %v; want prev 10", up, err)
	}
	if _, err := v.Update(0, 1); !errors.Is(err, state.ErrNoTxID) {
		t.Errorf("Update(0) = %v; want ErrNoTxID", err)
	}
}

func TestEncodeDecodeValue(t *testing.T) {
	for _, v := range []opaque.Value[[]string]{
		{TxID: 1, Curr: []string{"a"}},
		{TxID: 1 << 40, Curr: nil, Prev: []string{}, HasPrev: true},
		{TxID: 5, Curr: []string{"x", "y"}, Prev: nil, HasPrev: true},
	} {
		b, err := opaque.Encode(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := opaque.Decode[[]string](b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.TxID != v.TxID || got.HasPrev != v.HasPrev || len(got.Curr) != len(v.Curr) ||
			(got.Curr == nil) != (v.Curr == nil) || len(got.Prev) != len(v.Prev) {
			t.Errorf("round trip of %+v = %+v", v, got)
		}
	}
	// A small counter: array header, kind and version, txid, curr and
	// prev take one byte each.
	b, _ := opaque.Encode(opaque.Value[int64]{TxID: 100, Curr: 120, Prev: 119, HasPrev: true}, nil)
	if want := []byte{0x94, 0x11, 100, 120, 119}; string(b) != string(want) {
		t.Errorf("counter envelope = %x, want %x", b, want)
	}
}
