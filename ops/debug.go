package ops

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/squallstream/squall/trident"
)

// Debug returns a filter that writes every tuple to w and keeps it, one
// line per tuple in one Write call:
//
//	prefix: word="the" count=2
//
// Strings and byte slices are quoted, times use RFC 3339 with nanoseconds,
// nil is written nil, other values as fmt.Print writes them. An empty
// prefix is "DEBUG". The filter serializes its own writes, so w need not
// be safe for concurrent use; a write error is ignored, since a debug
// aid must not change what the stream does. It panics if w is nil.
func Debug(prefix string, w io.Writer) trident.Filter {
	if w == nil {
		panic("ops: Debug: nil writer")
	}
	if prefix == "" {
		prefix = "DEBUG"
	}
	return &debugWriter{prefix: prefix, w: w}
}

type debugWriter struct {
	prefix string
	mu     sync.Mutex
	w      io.Writer
}

func (d *debugWriter) Keep(_ context.Context, t trident.Tuple) (bool, error) {
	var b strings.Builder
	b.WriteString(d.prefix)
	b.WriteByte(':')
	for i, f := range t.Fields() {
		b.WriteByte(' ')
		b.WriteString(f)
		b.WriteByte('=')
		b.WriteString(debugValue(t.Value(i)))
	}
	b.WriteByte('\n')
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _ = io.WriteString(d.w, b.String())
	return true, nil
}

func debugValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return strconv.Quote(x)
	case []byte:
		return strconv.Quote(string(x))
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// DebugLog returns a filter that logs every tuple to l at level Info and
// keeps it. The message is prefix ("DEBUG" when empty) and every field is
// an attribute with the field's name:
//
//	level=INFO msg=words word=the count=2
//
// It panics if l is nil.
func DebugLog(prefix string, l *slog.Logger) trident.Filter {
	if l == nil {
		panic("ops: DebugLog: nil logger")
	}
	if prefix == "" {
		prefix = "DEBUG"
	}
	return debugLogger{prefix: prefix, l: l}
}

type debugLogger struct {
	prefix string
	l      *slog.Logger
}

func (d debugLogger) Keep(ctx context.Context, t trident.Tuple) (bool, error) {
	if !d.l.Enabled(ctx, slog.LevelInfo) {
		return true, nil
	}
	attrs := make([]slog.Attr, t.Len())
	for i, f := range t.Fields() {
		attrs[i] = slog.Any(f, t.Value(i))
	}
	d.l.LogAttrs(ctx, slog.LevelInfo, d.prefix, attrs...)
	return true, nil
}
