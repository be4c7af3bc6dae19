package kafka

import (
	"time"

	"github.com/squallstream/squall/trident"
)

// Record is one Kafka record as the spout read it. Key, Value and header
// values belong to the record: a Decoder may keep them.
type Record struct {
	Topic     string
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []Header
	Time      time.Time
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

// Decoder turns a record into the values of one tuple, in the order of
// Fields. Decoding must be deterministic: a replayed batch must give the
// same tuples. An error sends the record to the dead-letter topic; the
// batch goes on without it.
type Decoder interface {
	Fields() trident.Fields
	Decode(r Record) ([]any, error)
}

// DecoderFunc returns a Decoder with the given fields that calls decode.
func DecoderFunc(fields trident.Fields, decode func(r Record) ([]any, error)) Decoder {
	return decoderFunc{fields: fields, decode: decode}
}

type decoderFunc struct {
	fields trident.Fields
	decode func(Record) ([]any, error)
}

func (d decoderFunc) Fields() trident.Fields         { return d.fields }
func (d decoderFunc) Decode(r Record) ([]any, error) { return d.decode(r) }

// Names of the raw fields.
const (
	FieldTopic     = "topic"
	FieldPartition = "partition"
	FieldOffset    = "offset"
	FieldKey       = "key"
	FieldValue     = "value"
	FieldHeaders   = "headers"
	FieldTimestamp = "timestamp"
)

// RawFields is the default Decoder: every record becomes the tuple (topic
// string, partition int, offset int64, key []byte, value []byte, headers
// []Header, timestamp time.Time). It never fails.
type RawFields struct{}

// Fields returns the raw field names.
func (RawFields) Fields() trident.Fields {
	return trident.Fields{FieldTopic, FieldPartition, FieldOffset, FieldKey, FieldValue, FieldHeaders, FieldTimestamp}
}

// Decode returns the raw values of r.
func (RawFields) Decode(r Record) ([]any, error) {
	return []any{r.Topic, r.Partition, r.Offset, r.Key, r.Value, r.Headers, r.Time}, nil
}

// rawValues builds RawFields tuples for one partition with fewer
// allocations than Decode: the topic and partition are boxed once, and the
// tuples' value slices are cut from shared chunks (a collector may keep a
// tuple, never change it).
type rawValues struct {
	topic, partition any
	chunk            []any
}

const rawChunk = 256 // tuples per chunk

func newRawValues(tp topicPartition) *rawValues {
	return &rawValues{topic: tp.topic, partition: tp.partition}
}

func (v *rawValues) values(r Record) []any {
	if len(v.chunk) < 7 {
		v.chunk = make([]any, 7*rawChunk)
	}
	out := v.chunk[:7:7]
	v.chunk = v.chunk[7:]
	out[0], out[1], out[2], out[3], out[4], out[5], out[6] = v.topic, v.partition, r.Offset, r.Key, r.Value, r.Headers, r.Time
	return out
}
