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
