package spout

import (
	"encoding/json"
	"fmt"
)

// Codec turns an emitter's metadata into bytes for the coordination store
// and back. Decode(Encode(m)) must describe the same batch as m.
type Codec[M any] interface {
	Encode(m M) ([]byte, error)
	Decode(b []byte) (M, error)
}

// JSON is the default Codec: encoding/json. Metadata types should be
// structs with exported fields (for Kafka, {First, Next int64}).
type JSON[M any] struct{}

// Encode implements Codec.
func (JSON[M]) Encode(m M) ([]byte, error) { return json.Marshal(m) }

// Decode implements Codec.
func (JSON[M]) Decode(b []byte) (M, error) {
	var m M
	err := json.Unmarshal(b, &m)
	return m, err
}

// Stored values are enveloped so that a codec's output can never be taken
// for a marker:
//
//	empty             a marker: the partition has no batch in this txid
//	0x01 <codec data> the metadata of the partition's batch (version 1)
//
// The allocator's partition lists use the same version byte followed by
// a JSON array of partition names.
const formatV1 = 0x01

// marker is the stored value of a partition that has no batch in a txid.
var marker = []byte{}

func isMarker(v []byte) bool { return len(v) == 0 }

// encodeMeta envelopes the encoding of m.
func encodeMeta[M any](c Codec[M], m M) ([]byte, error) {
	b, err := c.Encode(m)
	if err != nil {
		return nil, fmt.Errorf("%w: encode: %w", ErrBadMetadata, err)
	}
	out := make([]byte, 0, len(b)+1)
	return append(append(out, formatV1), b...), nil
}

// decodeMeta opens a non-marker value made by encodeMeta.
func decodeMeta[M any](c Codec[M], v []byte) (M, error) {
	var zero M
	if len(v) == 0 || v[0] != formatV1 {
		return zero, fmt.Errorf("%w: unknown format in %d bytes", ErrBadMetadata, len(v))
	}
	m, err := c.Decode(v[1:])
	if err != nil {
		return zero, fmt.Errorf("%w: decode: %w", ErrBadMetadata, err)
	}
	return m, nil
}

// encodePartitions stores an allocator's partition list.
func encodePartitions(ps []Partition) ([]byte, error) {
	return encodeMeta[[]Partition](JSON[[]Partition]{}, ps)
}

// decodePartitions reads a list stored by encodePartitions and checks it.
func decodePartitions(v []byte) ([]Partition, error) {
	ps, err := decodeMeta[[]Partition](JSON[[]Partition]{}, v)
	if err != nil {
		return nil, err
	}
	if err := checkSorted(ps); err != nil {
		return nil, fmt.Errorf("%w: stored partition list: %w", ErrBadMetadata, err)
	}
	return ps, nil
}
