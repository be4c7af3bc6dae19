package wire

import (
	"bytes"
	"testing"
)

func TestOpaqueRoundTrip(t *testing.T) {
	for _, o := range []Opaque{
		{TxID: 1, Curr: []byte{0x05}},
		{TxID: 1 << 40, Curr: []byte{0xc0}, Prev: []byte{0xc0}, HasPrev: true}, // nil values, prev present
		{TxID: 300, Curr: []byte{0xa1, 'x'}, Prev: []byte{0x92, 0x01, 0x02}, HasPrev: true},
	} {
		b := AppendOpaque(nil, o)
		got, err := ParseOpaque(b)
		if err != nil {
			t.Fatalf("ParseOpaque(%x): %v", b, err)
		}
		if got.TxID != o.TxID || got.HasPrev != o.HasPrev || !bytes.Equal(got.Curr, o.Curr) || !bytes.Equal(got.Prev, o.Prev) {
			t.Errorf("round trip of %+v = %+v", o, got)
		}
	}
}

func TestTransactionalAndPlainRoundTrip(t *testing.T) {
	tv := Transactional{TxID: 70000, Val: []byte{0x93, 1, 2, 3}}
	got, err := ParseTransactional(AppendTransactional(nil, tv))
	if err != nil || got.TxID != tv.TxID || !bytes.Equal(got.Val, tv.Val) {
		t.Errorf("transactional round trip = %+v, %v", got, err)
	}
	v, err := ParsePlain(AppendPlain(nil, Plain{Val: []byte{0xc3}}))
	if err != nil || v.Removed || !bytes.Equal(v.Val, []byte{0xc3}) {
		t.Errorf("plain round trip = %+v, %v", v, err)
	}
}

func TestParseRejects(t *testing.T) {
	op := AppendOpaque(nil, Opaque{TxID: 1, Curr: []byte{0x01}})
	cases := map[string][]byte{
		"empty":            nil,
		"not an array":     {0x01},
		"no header":        {0x90},
		"wrong kind":       AppendTransactional(nil, Transactional{TxID: 1, Val: []byte{0x01}}),
		"future version":   {0x93, 0x12, 0x01, 0x01},
		"too short":        {0x92, 0x11, 0x01},
		"too long":         {0x95, 0x11, 0x01, 0x01, 0x01, 0x01},
		"truncated value":  {0x93, 0x11, 0x01, 0xa5, 'x'},
		"trailing bytes":   append(op, 0x00),
		"negative txid":    {0x93, 0x11, 0xff, 0x01},
		"string as header": {0x93, 0xa1, 'x', 0x01, 0x01},
	}
	for name, b := range cases {
		if _, err := ParseOpaque(b); err == nil {
			t.Errorf("%s: ParseOpaque(%x) succeeded", name, b)
		}
	}
}

func TestCheckValue(t *testing.T) {
	for _, ok := range [][]byte{{0xc0}, {0x01}, {0x92, 0x01, 0xa1, 'x'}} {
		if err := CheckValue(ok); err != nil {
			t.Errorf("CheckValue(%x) = %v", ok, err)
		}
	}
	for _, bad := range [][]byte{nil, {0x01, 0x02}, {0x92, 0x01}, {0xc1}} {
		if err := CheckValue(bad); err == nil {
			t.Errorf("CheckValue(%x) succeeded", bad)
		}
	}
}

func FuzzParseOpaque(f *testing.F) {
	f.Add(AppendOpaque(nil, Opaque{TxID: 9, Curr: []byte{0x01}, Prev: []byte{0x02}, HasPrev: true}))
	f.Add([]byte{0x93, 0x11, 0x01, 0xa5, 'x'})
	f.Add([]byte{0x93, 0x19, 0x02, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOpaque(b)
		if err != nil {
			return
		}
		// What parses survives a round trip (the encoding may differ:
		// msgpack allows wider integer forms than the ones we write).
		again, err := ParseOpaque(AppendOpaque(nil, o))
		if err != nil || again.TxID != o.TxID || again.HasPrev != o.HasPrev || again.Removed != o.Removed ||
			!bytes.Equal(again.Curr, o.Curr) || !bytes.Equal(again.Prev, o.Prev) {
			t.Errorf("ParseOpaque(%x) = %+v; after a round trip %+v, %v", b, o, again, err)
		}
	})
}

func TestTombstoneRoundTrip(t *testing.T) {
	for _, o := range []Opaque{
		{TxID: 2, Removed: true},
		{TxID: 2, Removed: true, Prev: []byte{0x01}, HasPrev: true},
		{TxID: 2, Removed: true, Prev: []byte{0xc0}, HasPrev: true}, // a nil prev is a prev
	} {
		b := AppendOpaque(nil, o)
		got, err := ParseOpaque(b)
		if err != nil {
			t.Fatalf("ParseOpaque(%x): %v", b, err)
		}
		if !got.Removed || got.Curr != nil || got.TxID != o.TxID || got.HasPrev != o.HasPrev || !bytes.Equal(got.Prev, o.Prev) {
			t.Errorf("round trip of %+v = %+v", o, got)
		}
	}
	// The exact bytes: [0x19, 2] and [0x19, 2, 1].
	if b := AppendOpaque(nil, Opaque{TxID: 2, Removed: true}); !bytes.Equal(b, []byte{0x92, 0x19, 0x02}) {
		t.Errorf("opaque tombstone = %x", b)
	}
	if b := AppendOpaque(nil, Opaque{TxID: 2, Removed: true, Prev: []byte{1}, HasPrev: true}); !bytes.Equal(b, []byte{0x93, 0x19, 0x02, 0x01}) {
		t.Errorf("opaque tombstone with prev = %x", b)
	}
	tb := AppendTransactional(nil, Transactional{TxID: 7, Removed: true})
	if !bytes.Equal(tb, []byte{0x92, 0x29, 0x07}) {
		t.Errorf("transactional tombstone = %x", tb)
	}
	if got, err := ParseTransactional(tb); err != nil || !got.Removed || got.TxID != 7 || got.Val != nil {
		t.Errorf("transactional tombstone round trip = %+v, %v", got, err)
	}
	pb := AppendPlain(nil, Plain{Removed: true})
	if !bytes.Equal(pb, []byte{0x91, 0x39}) {
		t.Errorf("plain tombstone = %x", pb)
	}
	if got, err := ParsePlain(pb); err != nil || !got.Removed || got.Val != nil {
		t.Errorf("plain tombstone round trip = %+v, %v", got, err)
	}
	// A tombstone has one field less than a value, never the same count.
	for name, b := range map[string][]byte{
		"opaque tombstone with curr and prev": {0x94, 0x19, 0x02, 0x01, 0x01},
		"opaque tombstone without txid":       {0x91, 0x19},
		"transactional tombstone with value":  {0x93, 0x29, 0x07, 0x01},
		"plain tombstone with value":          {0x92, 0x39, 0x01},
	} {
		_, e1 := ParseOpaque(b)
		_, e2 := ParseTransactional(b)
		_, e3 := ParsePlain(b)
		if e1 == nil || e2 == nil || e3 == nil {
			t.Errorf("%s (%x) parsed: %v %v %v", name, b, e1, e2, e3)
		}
	}
}
