package transport

import (
	"context"
	"reflect"
	"testing"
)

func TestLoopbackDeliversInOrderPerTask(t *testing.T) {
	rec := newRecorder()
	srv := listen(t, serverConfig(rec))
	cli := dial(t, clientConfig(srv.Addr().String()))
	ctx := context.Background()
	const n = 20000
	var want [3][]Message
	for i := range n {
		m := tuple(TaskID(i%3), i)
		want[i%3] = append(want[i%3], m)
		if err := cli.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitFor(t, n)
	for task := range want {
		if got := rec.messages(TaskID(task)); !reflect.DeepEqual(got, want[task]) {
			t.Fatalf("task %d: %d messages, first difference in order or content", task, len(got))
		}
	}
	if err := cli.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st := cli.Stats()
	if st.Sent != n || st.Lost != 0 || st.Queued != n || st.Connects != 1 {
		t.Fatalf("client stats %+v", st)
	}
	if ss := srv.Stats(); ss.Messages != n || ss.Frames != st.Frames || ss.Bytes != st.Bytes || ss.Active != 1 {
		t.Fatalf("server stats %+v, client %+v", ss, st)
	}
}
