package transport

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestStalledReceiverBlocksSenderWithinBound runs over in-memory pipes in
// virtual time: once every goroutine is blocked, the sender must be
// blocked in Send, with the client's queue within its bound and the
// messages accepted so far within what the queues and buffers on the way
// can hold.
func TestStalledReceiverBlocksSenderWithinBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mn := newMemNet()
		rec := newRecorder()
		rec.gate = make(chan struct{})
		scfg := serverConfig(rec)
		scfg.Listener, scfg.ReceiveQueue = mn.listen("server"), 1
		srv, err := Listen(t.Context(), scfg)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		cfg := clientConfig("server")
		cfg.Dial, cfg.QueueBytes, cfg.FrameBytes = mn.dial, 4096, 1024
		cli, err := NewClient(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()

		const n = 100_000
		var accepted atomic.Int64
		done := make(chan error, 1)
		go func() { // batches of 50, so the bound must hold within one Send too
			for i := 0; i < n; i += 50 {
				batch := make([]Message, 50)
				for j := range batch {
					batch[j] = tuple(1, i+j)
				}
				if err := cli.Send(context.Background(), batch...); err != nil {
					done <- err
					return
				}
				accepted.Add(50)
			}
			done <- nil
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("the sender was not blocked by a stalled receiver (Send returned %v)", err)
		default:
		}
		size := encodedSize(t, tuple(1, n))
		st := cli.Stats()
		if st.QueuedBytes > cfg.QueueBytes+size {
			t.Fatalf("%d bytes queued, bound %d + one message of %d", st.QueuedBytes, cfg.QueueBytes, size)
		}
		// Client queue and the writer's batch, the server's read buffer,
		// and frames in the receive queue, the decoder and the handler.
		bound := 2*(cfg.QueueBytes+size) + 64<<10 + (scfg.ReceiveQueue+2)*(cfg.FrameBytes+size)
		if a := int(accepted.Load()) + 50; a*size > bound { // the batch blocked in Send may be partly queued
			t.Fatalf("%d messages (%d bytes) accepted by a stalled receiver, bound %d bytes", a, a*size, bound)
		}
		t.Logf("stalled after %d messages (%d bytes queued)", accepted.Load(), st.QueuedBytes)

		close(rec.gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		rec.waitFor(t, n)
		for i, m := range rec.messages(1) {
			if m.Values[1] != i {
				t.Fatalf("message %d carries %v", i, m.Values[1])
			}
		}
	})
}

// TestStalledReceiverOverTCP: the same over loopback TCP, where the
// kernel's socket buffers add to what is accepted before Send blocks.
func TestStalledReceiverOverTCP(t *testing.T) {
	rec := newRecorder()
	rec.gate = make(chan struct{})
	scfg := serverConfig(rec)
	scfg.ReceiveQueue = 1
	srv := listen(t, scfg)
	cfg := clientConfig(srv.Addr().String())
	cfg.QueueBytes = 64 << 10
	cli := dial(t, cfg)
	msg := func(i int) Message {
		return Message{Kind: KindTuple, Task: 2, Values: []any{make([]byte, 1000), i}}
	}
	size := encodedSize(t, msg(0))
	accepted := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := cli.Send(ctx, msg(accepted))
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		accepted++
		if accepted > 100_000 { // 100 MB: nothing pushes back
			t.Fatal("Send never blocked on a stalled receiver")
		}
	}
	if st := cli.Stats(); st.QueuedBytes > cfg.QueueBytes+size {
		t.Fatalf("%d bytes queued, bound %d + %d", st.QueuedBytes, cfg.QueueBytes, size)
	}
	t.Logf("Send blocked after %d messages of %d bytes", accepted, size)
	close(rec.gate)
	rec.waitFor(t, accepted)
}

func encodedSize(t testing.TB, m Message) int {
	t.Helper()
	b, err := appendFrame(newEncoder(nil), nil, []Message{m})
	if err != nil {
		t.Fatal(err)
	}
	return len(b) - frameHeader
}
