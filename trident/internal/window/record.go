package window

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Record is what the shell stores for one window task and one txid: the
// state after the batch and the tuples of the windows the batch fired,
// each encoded by the shell, in emission order. A replay of the txid
// re-emits Fired instead of running the batch again.
type Record struct {
	State State
	Fired [][]byte
}

// recordVersion is the first element of an encoded record.
const recordVersion = 1

// Marshal encodes r as a msgpack array: version, watermark, seen, late,
// the items as a flat array of position and data, the fired tuples.
func (r Record) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	size := 64
	for _, it := range r.State.Items {
		size += len(it.Data) + 16
	}
	for _, f := range r.Fired {
		size += len(f) + 5
	}
	buf.Grow(size)
	enc := msgpack.NewEncoder(&buf)
	err := enc.EncodeArrayLen(6)
	for _, v := range []int64{recordVersion, r.State.Watermark, r.State.Seen, r.State.Late} {
		err = first(err, enc.EncodeInt(v))
	}
	err = first(err, enc.EncodeArrayLen(2*len(r.State.Items)))
	for _, it := range r.State.Items {
		err = first(err, enc.EncodeInt(it.Pos))
		err = first(err, enc.EncodeBytes(it.Data))
	}
	err = first(err, enc.EncodeArrayLen(len(r.Fired)))
	for _, f := range r.Fired {
		err = first(err, enc.EncodeBytes(f))
	}
	if err != nil {
		return nil, fmt.Errorf("window: encoding record: %w", err)
	}
	return buf.Bytes(), nil
}

func first(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// UnmarshalRecord decodes a record encoded by Marshal.
func UnmarshalRecord(b []byte) (Record, error) {
	r, err := unmarshalRecord(b)
	if err != nil {
		return Record{}, fmt.Errorf("window: decoding record: %w", err)
	}
	return r, nil
}

func unmarshalRecord(b []byte) (Record, error) {
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return Record{}, err
	}
	if n != 6 {
		return Record{}, fmt.Errorf("%d fields, want 6", n)
	}
	var head [4]int64
	for i := range head {
		if head[i], err = dec.DecodeInt64(); err != nil {
			return Record{}, err
		}
	}
	if head[0] != recordVersion {
		return Record{}, fmt.Errorf("record version %d, want %d", head[0], recordVersion)
	}
	r := Record{State: State{Watermark: head[1], Seen: head[2], Late: head[3]}}
	if n, err = dec.DecodeArrayLen(); err != nil {
		return Record{}, err
	}
	if n%2 != 0 {
		return Record{}, fmt.Errorf("odd item array of %d", n)
	}
	if n > 0 {
		r.State.Items = make([]Item, n/2)
	}
	for i := range r.State.Items {
		it := &r.State.Items[i]
		if it.Pos, err = dec.DecodeInt64(); err != nil {
			return Record{}, err
		}
		if it.Data, err = dec.DecodeBytes(); err != nil {
			return Record{}, err
		}
	}
	if n, err = dec.DecodeArrayLen(); err != nil {
		return Record{}, err
	}
	if n > 0 {
		r.Fired = make([][]byte, n)
	}
	for i := range r.Fired {
		if r.Fired[i], err = dec.DecodeBytes(); err != nil {
			return Record{}, err
		}
	}
	return r, nil
}
