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
	v, err := ParsePlain(AppendPlain(nil, []byte{0xc3}))
	if err != nil || !bytes.Equal(v, []byte{0xc3}) {
		t.Errorf("plain round trip = %x, %v", v, err)
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
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOpaque(b)
		if err != nil {
			return
		}
		// What parses survives a round trip (the encoding may differ:
		// msgpack allows wider integer forms than the ones we write).
		again, err := ParseOpaque(AppendOpaque(nil, o))
		if err != nil || again.TxID != o.TxID || again.HasPrev != o.HasPrev ||
			!bytes.Equal(again.Curr, o.Curr) || !bytes.Equal(again.Prev, o.Prev) {
			t.Errorf("ParseOpaque(%x) = %+v; after a round trip %+v, %v", b, o, again, err)
		}
	})
}
