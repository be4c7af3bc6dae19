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

// Marshal encodes r.
func (r Record) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	items := make([][]any, len(r.State.Items))
	for i, it := range r.State.Items {
		items[i] = []any{it.Pos, it.Data}
	}
	v := []any{recordVersion, r.State.Watermark, r.State.Seen, r.State.Late, items, r.Fired}
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("window: encoding record: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalRecord decodes a record encoded by Marshal.
func UnmarshalRecord(b []byte) (Record, error) {
	var raw struct {
		_msgpack  struct{} `msgpack:",as_array"`
		Version   int
		Watermark int64
		Seen      int64
		Late      int64
		Items     []struct {
			_msgpack struct{} `msgpack:",as_array"`
			Pos      int64
			Data     []byte
		}
		Fired [][]byte
	}
	if err := msgpack.Unmarshal(b, &raw); err != nil {
		return Record{}, fmt.Errorf("window: decoding record: %w", err)
	}
	if raw.Version != recordVersion {
		return Record{}, fmt.Errorf("window: record version %d, want %d", raw.Version, recordVersion)
	}
	r := Record{State: State{Watermark: raw.Watermark, Seen: raw.Seen, Late: raw.Late}, Fired: raw.Fired}
	for _, it := range raw.Items {
		r.State.Items = append(r.State.Items, Item{Pos: it.Pos, Data: it.Data})
	}
	return r, nil
}
