package runtime

import (
	"context"
	"reflect"
	"testing"

	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// TestCoordinationValuesCrossTheWire sends an attempt and an announcement
// through a transport client and server with valueTypes registered on
// both ends, and checks that they arrive equal.
func TestCoordinationValuesCrossTheWire(t *testing.T) {
	ann := announcement{attempt: txn.Attempt{TxID: 7, N: 2}, batches: []spout.Batch{
		{Attempt: txn.Attempt{TxID: 7, N: 2}, Partitions: []spout.Partition{"clicks@0", "clicks@1"}, Frozen: true, Committed: 6},
		{Attempt: txn.Attempt{TxID: 7, N: 2}, Committed: 6},
	}}
	values := []any{txn.Attempt{TxID: 1<<40 + 3, N: 1<<32 - 1}, ann, 5}
	got := make(chan []any, 1)
	srv, err := transport.Listen(context.Background(), transport.ServerConfig{Topology: "t", Worker: "b", Types: valueTypes(),
		Handler: transport.HandlerFunc(func(_ context.Context, _ string, _ transport.TaskID, msgs []transport.Message) error {
			got <- msgs[0].Values
			return nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := transport.NewClient(context.Background(), transport.ClientConfig{Topology: "t", Worker: "a", Peer: "b",
		Addr: srv.Addr().String(), Types: valueTypes()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := cli.Send(context.Background(), transport.Message{Kind: transport.KindTuple, Task: 1, Stream: streamBatch, Values: values}); err != nil {
		t.Fatal(err)
	}
	if v := <-got; !reflect.DeepEqual(v, values) {
		t.Fatalf("received %#v, want %#v", v, values)
	}
}

func TestMalformedCoordinationValuesAreRefused(t *testing.T) {
	good := appendAnnouncement(nil, announcement{attempt: txn.Attempt{TxID: 1}, batches: []spout.Batch{{Partitions: []spout.Partition{"p"}}}})
	for i := range good {
		r := wireReader{b: good[:i]}
		r.announcement()
		if r.done() == nil {
			t.Fatalf("a truncated announcement (%d of %d bytes) decoded", i, len(good))
		}
	}
	r := wireReader{b: append(appendAttempt(nil, txn.Attempt{TxID: 1}), 0)}
	r.attempt()
	if r.done() == nil {
		t.Fatal("trailing bytes accepted")
	}
	huge := appendAttempt(nil, txn.Attempt{TxID: 1})
	huge = append(huge, 0xff, 0xff, 0xff, 0xff, 0x0f) // a count far beyond the data
	r = wireReader{b: huge}
	r.announcement()
	if r.done() == nil {
		t.Fatal("an impossible count accepted")
	}
}
