package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
)

// tupleBody returns the body of a frame of one tuple whose values are
// count copies of the encoded value v, in an array32.
func tupleBody(count int, v []byte) []byte {
	b := []byte{0x91, 0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0xdd}
	b = binary.BigEndian.AppendUint32(b, uint32(count))
	for range count {
		b = append(b, v...)
	}
	return b
}

// decodeFrame decodes body with a fresh decoder, and returns its
// messages, its charge, its error and what decoding allocated
// (TotalAlloc): the least of three runs, so that an allocation elsewhere
// in the process does not count.
func decodeFrame(t testing.TB, body []byte) (msgs []Message, charged int, alloc uint64, err error) {
	if raceEnabled {
		t.Skip("the race detector changes what allocations take")
	}
	alloc = uint64(math.MaxUint64)
	for range 3 {
		dec := newDecoder(nil)
		alloc = min(alloc, allocated(func() { msgs, err = dec.frame(body, nil) }))
		charged = dec.charged
	}
	return msgs, charged, alloc, err
}

// allocated returns the bytes f allocated, by TotalAlloc.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestNilFloodWithinBudget: a 16 MiB frame of one tuple of about 16
// million nils used to make the decoder allocate 16 bytes per byte (256
// MiB); now the tuple is refused before its values are allocated.
func TestNilFloodWithinBudget(t *testing.T) {
	const size = 16 << 20
	body := tupleBody(size-12, []byte{codeNil})
	if len(body) != size {
		t.Fatalf("body of %d bytes", len(body))
	}
	_, _, n, err := decodeFrame(t, body)
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("got %v, want ErrOverBudget", err)
	}
	if n > 64<<20 {
		t.Fatalf("decoding a %d-byte frame allocated %d bytes", size, n)
	}
	t.Logf("%v; allocated %d bytes", err, n)
}

// TestSpreadNilFloodWithinBudget: the same flood spread over many tuples
// of 255 nils each is charged as it is decoded, and refused once it has
// used its budget: allocation never goes above it.
func TestSpreadNilFloodWithinBudget(t *testing.T) {
	one := append([]byte{0x96, 0x01, 0x00, 0xa0, 0x00, 0x90, 0xdc, 0x00, 0xff}, make([]byte, 255)...)
	for i := 9; i < len(one); i++ {
		one[i] = codeNil
	}
	count := (16<<20 - 5) / len(one)
	body := []byte{0xdd}
	body = binary.BigEndian.AppendUint32(body, uint32(count))
	for range count {
		body = append(body, one...)
	}
	_, _, n, err := decodeFrame(t, body)
	if !errors.Is(err, ErrOverBudget) {
		t.Fatalf("got %v, want ErrOverBudget", err)
	}
	if limit := uint64(FrameBudget(len(body))) + 1024; n > limit { // and the error
		t.Fatalf("decoding a %d-byte frame allocated %d bytes, more than its budget %d", len(body), n, limit)
	}
	t.Logf("%v; allocated %d bytes (budget %d)", err, n, FrameBudget(len(body)))
}

// denseFrames are frames of the values that cost the most to decode per
// byte on the wire, each of about size bytes.
func denseFrames(size int) map[string][]byte {
	values := map[string][]byte{
		"nils":                 {codeNil},
		"trues":                {codeTrue},
		"small ints":           {0x05},
		"negative ints":        {0xff},
		"int16s":               {codeInt16, 0x12, 0x34},
		"float32s":             {codeFloat32, 0, 0, 0, 1},
		"empty strings":        {0xa0},
		"empty bins":           {codeBin8, 0},
		"one-byte bins":        {codeBin8, 1, 'x'},
		"empty arrays":         {0x90},
		"arrays of one nil":    {0x91, codeNil},
		"empty maps":           {0x80},
		"maps of one entry":    {0x81, 0xa0, codeNil},
		"maps of nine entries": []byte("\x89\xa1a\xc0\xa1b\xc0\xa1c\xc0\xa1d\xc0\xa1e\xc0\xa1f\xc0\xa1g\xc0\xa1h\xc0\xa1i\xc0"),
		"nested maps":          append([]byte(strings.Repeat("\x81\xa0", 31)), codeNil),
		"nested arrays":        append([]byte(strings.Repeat("\x91", 31)), codeNil),
		"sized int8s":          {codeFixExt1 + 1, byte(extSized), tagInt8, 0x80},
		"timestamps":           {codeFixExt1 + 2, 0xff, 0, 0, 0, 1},
	}
	out := map[string][]byte{}
	for name, v := range values {
		out[name] = tupleBody((size-12)/len(v), v)
	}
	// Distinct short strings, which the string cache does not save.
	var b []byte
	for i := 0; len(b) < size; i++ {
		b = append(b, 0xa3, byte('a'+i%26), byte('a'+i/26%26), byte('a'+i/676%26))
	}
	out["distinct strings"] = append(tupleBody(len(b)/4, nil), b...)
	// Messages as short as they come, of every kind but tuples.
	for _, m := range []string{"\x93\x04\x00\x00", "\x94\x03\x00\x00\x00", "\x95\x02\x00\x00\x00\x00", "\x94\x06\x00\x00\x00"} {
		count := size / len(m)
		body := binary.BigEndian.AppendUint32([]byte{0xdd}, uint32(count))
		out[fmt.Sprintf("messages %x", m[1])] = append(body, strings.Repeat(m, count)...)
	}
	// Tuples with as many anchors and as few values as can be.
	anchors := append([]byte{0x96, 0x01, 0x00, 0xa0, 0x00, 0xdc, 0x01, 0x00}, make([]byte, 256)...)
	anchors = append(anchors, 0x90)
	count := size / len(anchors)
	body := binary.BigEndian.AppendUint32([]byte{0xdd}, uint32(count))
	out["anchors"] = append(body, strings.Repeat(string(anchors), count)...)
	return out
}

// TestDecodeAllocationWithinCharge measures what decoding the densest
// frames allocates, which must never be more than the decoder charged
// (bar the arena's current chunks), and checks the charge against the
// encoder's count for the same messages.
func TestDecodeAllocationWithinCharge(t *testing.T) {
	for name, body := range denseFrames(32 << 10) {
		t.Run(name, func(t *testing.T) {
			msgs, charged, n, err := decodeFrame(t, body)
			if err != nil {
				t.Fatal(err)
			}
			if n > uint64(charged) {
				t.Fatalf("allocated %d bytes, charged %d", n, charged)
			}
			enc := newEncoder(nil)
			if _, err := appendFrame(enc, nil, msgs); err != nil {
				t.Fatal(err)
			}
			if enc.cost < charged {
				t.Fatalf("the encoder counts %d bytes, the decoder charged %d", enc.cost, charged)
			}
			t.Logf("%6d bytes: allocated %8d, charged %8d (%.1f per byte), counted by the encoder %8d",
				len(body), n, charged, float64(charged)/float64(len(body)), enc.cost)
		})
	}
}

// TestDenseFramesOverTheirBudget: the same frames at 1 MiB decode when
// their charge is within FrameBudget, and are refused otherwise, before
// allocating more than the budget.
func TestDenseFramesOverTheirBudget(t *testing.T) {
	for name, body := range denseFrames(1 << 20) {
		t.Run(name, func(t *testing.T) {
			_, charged, n, err := decodeFrame(t, body)
			budget := FrameBudget(len(body))
			switch {
			case err == nil && charged > budget:
				t.Fatalf("accepted with %d bytes charged, over the budget of %d", charged, budget)
			case err != nil && !errors.Is(err, ErrOverBudget):
				t.Fatal(err)
			case n > uint64(budget)+1024: // and the error
				t.Fatalf("allocated %d bytes, over the budget of %d", n, budget)
			}
			t.Logf("allocated %8d, budget %d: %v", n, budget, err)
		})
	}
}

// TestNilFloodOverTCP sends the 16 MiB flood to a server: the frame is
// refused and counted, nothing is delivered, and the server lives on.
func TestNilFloodOverTCP(t *testing.T) {
	rec, logs := newRecorder(), &logRecords{}
	cfg := serverConfig(rec)
	cfg.Logger = slog.New(logs)
	srv := listen(t, cfg)
	body := tupleBody(16<<20-12, []byte{codeNil})
	conn := rawDial(t, srv)
	if _, err := clientHandshake(conn, &ClientConfig{Topology: testTopology, Worker: "raw", Peer: serverWorker}); err != nil {
		t.Fatal(err)
	}
	go func() {
		conn.Write(binary.BigEndian.AppendUint32(nil, uint32(len(body))))
		conn.Write(body)
	}()
	expectClosed(t, conn)
	waitServer(t, srv, func(st ServerStats) bool { return st.RefusedByReason()[ReasonBudget] == 1 })
	if st := srv.Stats(); rec.count() != 0 || st.BadFrames != 1 || st.Frames != 0 {
		t.Fatalf("stats %+v, %d delivered", st, rec.count())
	}
	if r := logs.refusals(); len(r) != 1 || r[0]["reason"] != ReasonBudget || r[0]["remote"] == "" {
		t.Fatalf("logged %v", r)
	}
	cli := dial(t, clientConfig(srv.Addr().String()))
	sendRange(t, cli, 1, 0, 3)
	rec.waitFor(t, 3)
}

// TestSendRefusesDenseMessages: a message that cannot be decoded within
// the budget of a frame of its own is refused by Send, not sent to be
// refused by the server.
func TestSendRefusesDenseMessages(t *testing.T) {
	cli := dial(t, clientConfig("127.0.0.1:1"))
	err := cli.Send(context.Background(), Message{Kind: KindTuple, Task: 1, Values: []any{make([]any, 4<<20)}})
	if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("got %v, want ErrMessageTooLarge for its budget", err)
	}
	if st := cli.Stats(); st.Queued != 0 || st.QueuedBytes != 0 {
		t.Fatalf("queued: %+v", st)
	}
}

// TestClientKeepsFramesWithinBudget: with large frames allowed, a client
// closes a frame before its messages would take it over its budget, so
// the server accepts every frame of dense but legal messages.
func TestClientKeepsFramesWithinBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemNet()
		rec := newRecorder()
		scfg := serverConfig(rec)
		scfg.Listener = mem.listen("srv")
		srv := listen(t, scfg)
		ccfg := clientConfig("srv")
		ccfg.Dial, ccfg.FrameBytes, ccfg.QueueBytes = mem.dial, 4<<20, 16<<20
		cli := dial(t, ccfg)
		const n = 40
		msgs := make([]Message, n) // 100 KB each on the wire, 1.6 MB decoded
		for i := range msgs {
			msgs[i] = Message{Kind: KindTuple, Task: 1, Stream: "s", Values: []any{make([]any, 100_000)}}
		}
		if err := cli.Send(context.Background(), msgs...); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st := srv.Stats(); rec.count() != n || st.BadFrames != 0 || st.Frames < 4 {
			t.Fatalf("%d of %d delivered, server stats %+v %v", rec.count(), n, st, st.RefusedByReason())
		}
		cli.Close()
		srv.Close()
	})
}

// TestConnBudgetHoldsTheReader: while the handler holds a frame, a
// connection whose budget that frame fills is not read further, however
// long the receive queue.
func TestConnBudgetHoldsTheReader(t *testing.T) {
	for _, budget := range []int{1, 0} {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mem := newMemNet()
				rec := newRecorder()
				rec.gate = make(chan struct{})
				scfg := serverConfig(rec)
				scfg.Listener, scfg.ReceiveQueue, scfg.ConnBudget = mem.listen("srv"), 16, budget
				srv := listen(t, scfg)
				ccfg := clientConfig("srv")
				ccfg.Dial, ccfg.FrameMessages = mem.dial, 1
				cli := dial(t, ccfg)
				sendRange(t, cli, 1, 0, 10)
				synctest.Wait()
				frames := srv.Stats().Frames
				switch {
				case budget == 1 && frames != 1:
					t.Fatalf("%d frames decoded while the handler holds one; the budget admits one", frames)
				case budget == 0 && frames < 10:
					t.Fatalf("%d frames decoded; the default budget admits all 10", frames)
				}
				close(rec.gate)
				rec.waitFor(t, 10)
				cli.Close()
				srv.Close()
			})
		})
	}
}

func TestConnBudgetAcquireWaitsForRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &connBudget{limit: 100}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := b.acquire(ctx, 500); err != nil { // alone: admitted over the limit
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- b.acquire(ctx, 60) }()
		synctest.Wait()
		if len(done) != 0 {
			t.Fatal("admitted while 500 of 100 are held")
		}
		b.release(450) // 50 held: 50 + 60 does not fit
		synctest.Wait()
		if len(done) != 0 {
			t.Fatal("admitted over the limit while something is held")
		}
		b.release(10) // 40 + 60 fits
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		go func() { done <- b.acquire(ctx, 100) }()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiter whose context ended: %v", err)
		}
	})
}

// TestFrameBufferGrowsWithTheBody: a length prefix alone does not make
// the reader allocate the length it claims.
func TestFrameBufferGrowsWithTheBody(t *testing.T) {
	in := append(binary.BigEndian.AppendUint32(nil, 16<<20), "only ten b"...)
	buf, err := readFrame(bytes.NewReader(in), nil, 16<<20)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want a short read", err)
	}
	if cap(buf) > readChunk {
		t.Fatalf("a frame claiming 16 MiB with 10 bytes sent took a %d-byte buffer", cap(buf))
	}
	body := tupleBody(1<<20, []byte{codeNil})
	frame := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	got, err := readFrame(bytes.NewReader(frame), buf, len(body))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("a 1 MiB frame read back as %d bytes: %v", len(got), err)
	}
}
