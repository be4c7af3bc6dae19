package trident

import (
	"bytes"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// encodeValues encodes tuple values for a windows store: msgpack with
// sorted map keys, so equal values encode equally, and signed integers
// always as int64 (compact integers would decode as uint64).
func encodeValues(vals []any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(vals); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeValues decodes values encoded by encodeValues, with msgpack's
// loose types: signed integers as int64, unsigned ones as uint64, floats as float64;
// times at the top level come back in UTC.
func decodeValues(b []byte) ([]any, error) {
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, nil
	}
	vals := make([]any, n)
	for i := range vals {
		v, err := dec.DecodeInterfaceLoose()
		if err != nil {
			return nil, err
		}
		if t, ok := v.(time.Time); ok {
			v = t.UTC()
		}
		vals[i] = v
	}
	return vals, nil
}
