package transport

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// benchTuple is the benchmarks' message: a 3-value tuple (string, int,
// float64) with one anchor, as a word-count bolt would send.
func benchTuple(i int) Message {
	return Message{Kind: KindTuple, Task: TaskID(i % 4), Stream: "default", Source: 1,
		Values:  []any{"squall", i, 0.5},
		Anchors: []Anchor{{Root: RootID(i)*0x9e3779b97f4a7c15 | 1, Edge: uint64(i) * 0xbf58476d1ce4e5b9}}}
}

// counter is a Handler that counts messages and signals when it reaches
// want.
type counter struct {
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (c *counter) Deliver(_ context.Context, _ string, _ TaskID, msgs []Message) error {
	if c.n.Add(int64(len(msgs))) == c.want {
		close(c.done)
	}
	return nil
}

// benchLoopback sends b.N tuples over a loopback TCP pair, batch per Send,
// and waits until the server has delivered them all.
func benchLoopback(b *testing.B, batch int) {
	h := &counter{want: int64(b.N), done: make(chan struct{})}
	srv := listen(b, serverConfig(h))
	cli := dial(b, clientConfig(srv.Addr().String()))
	msgs := make([]Message, batch)
	for i := range msgs {
		msgs[i] = benchTuple(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for sent := 0; sent < b.N; sent += batch {
		if err := cli.Send(ctx, msgs[:min(batch, b.N-sent)]...); err != nil {
			b.Fatal(err)
		}
	}
	<-h.done
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	if cli.Stats().Lost != 0 || srv.Stats().BadFrames != 0 {
		b.Fatalf("client %+v server %+v", cli.Stats(), srv.Stats())
	}
}

// BenchmarkTransportLoopback: one op is one 3-value tuple from Send to
// the server's handler, sent in batches of 256 per Send (the topology
// runtime's default batch size).
func BenchmarkTransportLoopback(b *testing.B) { benchLoopback(b, 256) }

// BenchmarkTransportLoopbackSingle: the same with one message per Send.
func BenchmarkTransportLoopbackSingle(b *testing.B) { benchLoopback(b, 1) }

func benchFrame(b *testing.B) []Message {
	msgs := make([]Message, 256)
	for i := range msgs {
		msgs[i] = benchTuple(i)
	}
	return msgs
}

// BenchmarkFrameEncode: one op encodes a frame of 256 3-value tuples.
func BenchmarkFrameEncode(b *testing.B) {
	msgs := benchFrame(b)
	enc := newEncoder(nil)
	buf, err := appendFrame(enc, nil, msgs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		buf, _ = appendFrame(enc, buf[:0], msgs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
}

// BenchmarkFrameDecode: one op decodes a frame of 256 3-value tuples.
func BenchmarkFrameDecode(b *testing.B) {
	msgs := benchFrame(b)
	buf, err := appendFrame(newEncoder(nil), nil, msgs)
	if err != nil {
		b.Fatal(err)
	}
	body := buf[lenPrefix:]
	dec := newDecoder(nil)
	out := make([]Message, 0, len(msgs))
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if out, err = dec.frame(body, out[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
}
