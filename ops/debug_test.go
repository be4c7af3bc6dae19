package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/squallstream/squall/trident"
)

func TestDebugFormat(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 30, 0, 5, time.UTC)
	tests := []struct {
		name   string
		prefix string
		tuple  trident.Tuple
		want   string
	}{
		{"strings and numbers", "words", tup("word count", "the", int64(2)), "words: word=\"the\" count=2\n"},
		{"default prefix", "", tup("word", "a b"), "DEBUG: word=\"a b\"\n"},
		{"nil, bytes, time, float, bool", "p", tup("n b t f ok", nil, []byte("x\n"), at, 1.5, true),
			"p: n=nil b=\"x\\n\" t=2026-03-01T12:30:00.000000005Z f=1.5 ok=true\n"},
		{"quotes inside strings", "p", tup("s", `say "hi"`), "p: s=\"say \\\"hi\\\"\"\n"},
		{"other values use fmt", "p", tup("r", reading{"a", 1}), "p: r={a 1}\n"},
		{"no fields", "p", tup(""), "p:\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			keep, err := Debug(tc.prefix, &buf).Keep(context.Background(), tc.tuple)
			if !keep || err != nil {
				t.Fatalf("Keep = %v, %v; want true, nil", keep, err)
			}
			if buf.String() != tc.want {
				t.Fatalf("wrote %q, want %q", buf.String(), tc.want)
			}
		})
	}
}

// lineWriter records each Write; it is not safe for concurrent use, so
// the race detector catches unserialized writes.
type lineWriter struct{ writes []string }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestDebugWritesOneLinePerTupleConcurrently(t *testing.T) {
	w := &lineWriter{}
	f := Debug("c", w)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := f.Keep(context.Background(), tup("g i", g, i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if len(w.writes) != 400 {
		t.Fatalf("%d writes, want 400", len(w.writes))
	}
	for _, line := range w.writes {
		var g, i int
		if n, err := fmt.Sscanf(line, "c: g=%d i=%d\n", &g, &i); n != 2 || err != nil {
			t.Fatalf("bad line %q", line)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestDebugIgnoresWriteErrors(t *testing.T) {
	keep, err := Debug("p", failingWriter{}).Keep(context.Background(), tup("a", 1))
	if !keep || err != nil {
		t.Fatalf("Keep = %v, %v; a debug aid must not change the stream", keep, err)
	}
}

func TestDebugLog(t *testing.T) {
	var buf bytes.Buffer
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: noTime}))
	keep, err := DebugLog("words", l).Keep(context.Background(), tup("word count", "the cow", 2))
	if !keep || err != nil {
		t.Fatalf("Keep = %v, %v", keep, err)
	}
	if want := "level=INFO msg=words word=\"the cow\" count=2\n"; buf.String() != want {
		t.Fatalf("logged %q, want %q", buf.String(), want)
	}

	buf.Reset()
	_, _ = DebugLog("", l).Keep(context.Background(), tup("a", 1))
	if want := "level=INFO msg=DEBUG a=1\n"; buf.String() != want {
		t.Fatalf("logged %q, want %q", buf.String(), want)
	}

	buf.Reset()
	quiet := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	keep, err = DebugLog("words", quiet).Keep(context.Background(), tup("a", 1))
	if !keep || err != nil || buf.Len() != 0 {
		t.Fatalf("Keep = %v, %v, logged %q; want the tuple kept and nothing logged below Warn", keep, err, buf.String())
	}
	if strings.Contains(buf.String(), "a=1") {
		t.Fatal("logged below the logger's level")
	}
}
