package transport

import (
	"context"
	"strings"
	"testing"
)

func TestManySmallMessagesMakeFewFrames(t *testing.T) {
	rec := newRecorder()
	srv := listen(t, serverConfig(rec))
	cfg := clientConfig(srv.Addr().String())
	cfg.FrameMessages = 256
	cli := dial(t, cfg)
	const n = 10000
	batch := make([]Message, n)
	for i := range batch {
		batch[i] = Message{Kind: KindAck, Task: TaskID(i % 4), Root: RootID(i + 1), XOR: uint64(i)}
	}
	// One Send holds the queue while it encodes, so the writer takes the
	// whole batch at once: exactly ceil(n/256) frames.
	if err := cli.Send(context.Background(), batch...); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, n)
	if err := cli.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := uint64((n + 255) / 256)
	if st := cli.Stats(); st.Frames != want {
		t.Fatalf("%d messages in %d frames, want %d", n, st.Frames, want)
	}
	if ss := srv.Stats(); ss.Frames != want || ss.Messages != n {
		t.Fatalf("server saw %d frames, %d messages", ss.Frames, ss.Messages)
	}
}

func TestConcurrentSendersShareFrames(t *testing.T) {
	rec := newRecorder()
	srv := listen(t, serverConfig(rec))
	cli := dial(t, clientConfig(srv.Addr().String()))
	const senders, each = 4, 5000
	errs := make(chan error, senders)
	for s := range senders {
		go func() {
			var err error
			for i := 0; i < each && err == nil; i++ {
				err = cli.Send(context.Background(), tuple(TaskID(s), i))
			}
			errs <- err
		}()
	}
	for range senders {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rec.waitFor(t, senders*each)
	for s := range senders { // each sender's order survives the sharing
		for i, m := range rec.messages(TaskID(s)) {
			if m.Values[1] != i {
				t.Fatalf("sender %d: message %d carries %v", s, i, m.Values[1])
			}
		}
	}
	if err := cli.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := cli.Stats(); st.Frames >= st.Sent {
		t.Fatalf("%d messages in %d frames: no batching", st.Sent, st.Frames)
	}
}

func TestFramesStayWithinMaxFrameBytes(t *testing.T) {
	rec := newRecorder()
	scfg := serverConfig(rec)
	scfg.MaxFrameBytes = 1000
	srv := listen(t, scfg)
	cfg := clientConfig(srv.Addr().String())
	cfg.MaxFrameBytes, cfg.FrameBytes = 1000, 900
	cli := dial(t, cfg)
	ctx := context.Background()
	var batch []Message
	for i := range 30 { // 400-byte messages: two fit in a frame, a third would not
		batch = append(batch, Message{Kind: KindTuple, Task: 1, Values: []any{strings.Repeat("x", 380), i}})
	}
	if err := cli.Send(ctx, batch...); err != nil {
		t.Fatal(err)
	}
	big := Message{Kind: KindTuple, Task: 1, Values: []any{strings.Repeat("x", 1000)}}
	if err := cli.Send(ctx, big); !errorsIs(err, ErrMessageTooLarge) {
		t.Fatalf("a message above MaxFrameBytes: %v", err)
	}
	rec.waitFor(t, 30)
	if ss := srv.Stats(); ss.BadFrames != 0 || ss.Frames != 15 {
		t.Fatalf("server stats %+v, want 15 frames of two", ss)
	}
	for i, m := range rec.messages(1) {
		if m.Values[1] != i {
			t.Fatalf("message %d carries %v", i, m.Values[1])
		}
	}
}
