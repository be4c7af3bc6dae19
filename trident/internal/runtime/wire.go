package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Extension ids of the coordination values on the wire.
const (
	extAttempt      = transport.MinExtID     // txn.Attempt: field 0 of every data tuple, and $freeze, $commit, $success, $report
	extAnnouncement = transport.MinExtID + 1 // announcement: $batch
)

// valueTypes returns the types the generated topology emits beyond the
// transport's built-in set, for its workers to exchange in cluster mode.
// The encodings are uvarints:
//
//	attempt      = txid n
//	announcement = attempt count batch*
//	batch        = attempt frozen(0|1) committed count (length bytes)*
func valueTypes() *transport.Types {
	ts := new(transport.Types)
	err := errors.Join(
		transport.Register(ts, extAttempt,
			func(b []byte, a txn.Attempt) ([]byte, error) { return appendAttempt(b, a), nil },
			func(data []byte) (txn.Attempt, error) {
				r := wireReader{b: data}
				a := r.attempt()
				return a, r.done()
			}),
		transport.Register(ts, extAnnouncement,
			func(b []byte, ann announcement) ([]byte, error) { return appendAnnouncement(b, ann), nil },
			func(data []byte) (announcement, error) {
				r := wireReader{b: data}
				ann := r.announcement()
				return ann, r.done()
			}),
	)
	if err != nil {
		panic(fmt.Sprintf("trident: registering value types: %v", err)) // fixed ids and types: a bug
	}
	return ts
}

func appendAttempt(b []byte, a txn.Attempt) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, uint64(a.TxID)), uint64(a.N))
}

func appendAnnouncement(b []byte, ann announcement) []byte {
	b = appendAttempt(b, ann.attempt)
	b = binary.AppendUvarint(b, uint64(len(ann.batches)))
	for _, bt := range ann.batches {
		b = appendAttempt(b, bt.Attempt)
		frozen := uint64(0)
		if bt.Frozen {
			frozen = 1
		}
		b = binary.AppendUvarint(b, frozen)
		b = binary.AppendUvarint(b, uint64(bt.Committed))
		b = binary.AppendUvarint(b, uint64(len(bt.Partitions)))
		for _, p := range bt.Partitions {
			b = binary.AppendUvarint(b, uint64(len(p)))
			b = append(b, p...)
		}
	}
	return b
}

// wireReader decodes the encodings of valueTypes; the first error sticks.
type wireReader struct {
	b   []byte
	err error
}

var errBadValue = errors.New("trident: malformed coordination value")

func (r *wireReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errBadValue
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a count of items that take at least one byte each.
func (r *wireReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errBadValue
		return 0
	}
	return int(n)
}

func (r *wireReader) attempt() txn.Attempt {
	txid, n := r.uvarint(), r.uvarint()
	if n > 1<<32-1 {
		r.err = errBadValue
	}
	return txn.Attempt{TxID: txn.TxID(txid), N: uint32(n)}
}

func (r *wireReader) announcement() announcement {
	ann := announcement{attempt: r.attempt()}
	for range r.count() {
		bt := spout.Batch{Attempt: r.attempt()}
		bt.Frozen = r.uvarint() == 1
		bt.Committed = txn.TxID(r.uvarint())
		for range r.count() {
			l := r.count()
			if r.err != nil {
				break
			}
			bt.Partitions = append(bt.Partitions, spout.Partition(r.b[:l]))
			r.b = r.b[l:]
		}
		ann.batches = append(ann.batches, bt)
	}
	return ann
}

func (r *wireReader) done() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = errBadValue
	}
	return r.err
}
