package logfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

func TestWriterRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.json")
	w, err := Open(Config{Path: path, MaxBytes: 100, MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	line := func(i int) string { return fmt.Sprintf("line %03d %s\n", i, strings.Repeat("x", 30)) } // 40 bytes
	for i := range 10 {
		if _, err := w.Write([]byte(line(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("late\n")); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}
	// Two lines a file (a third would pass 100 bytes): 8, 9 in path; 6, 7
	// in path.1; 4, 5 in path.2; older ones dropped.
	for i, want := range []string{line(8) + line(9), line(6) + line(7), line(4) + line(5)} {
		got, err := os.ReadFile(Name(path, i))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", Name(path, i), got, err, want)
		}
	}
	if _, err := os.Stat(Name(path, 3)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a fourth file is kept: %v", err)
	}

	// Reopening appends.
	w, err = Open(Config{Path: path, MaxBytes: 100, MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != line(8)+line(9)+"after\n" {
		t.Fatalf("reopened: %q", got)
	}
}

func TestWriterOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.json")
	w, err := Open(Config{Path: path, MaxBytes: 10, MaxFiles: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, s := range []string{"aaaaaaa\n", "bbbbbbbbbbbbbbbbbbbb\n", "c\n"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != "c\n" {
		t.Fatalf("file: %q", got)
	}
	if _, err := os.Stat(Name(path, 1)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("MaxFiles 1 kept an older file")
	}
	for _, c := range []Config{{}, {Path: "x", MaxBytes: -1}, {Path: "x", MaxFiles: -1}} {
		if _, err := Open(c); err == nil {
			t.Errorf("Open(%+v) accepted", c)
		}
	}
}

// writeLog writes lines across rotated files with a JSON slog handler.
func writeLog(t *testing.T, n int, maxBytes int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.json")
	w, err := Open(Config{Path: path, MaxBytes: maxBytes, MaxFiles: 4})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(w, nil))
	for i := range n {
		if i%10 == 3 {
			log.Warn("slow batch", "i", i, "txid", 1000+i)
		} else {
			log.Info("committed", "i", i)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTail(t *testing.T) {
	path := writeLog(t, 200, 4096) // about 4 files of 4 KiB; the oldest lines dropped
	res, err := Tail(path, 4, Query{Tail: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) != 5 || !strings.Contains(res.Lines[4], `"i":199`) || !strings.Contains(res.Lines[0], `"i":195`) {
		t.Fatalf("last 5: %q", res.Lines)
	}
	// Search across files: every WARN ("slow" ignoring case), oldest first.
	res, err = Tail(path, 4, Query{Contains: "SLOW", Tail: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) < 5 || res.More || res.Skipped != 0 {
		t.Fatalf("search: %d lines, more %v, skipped %d", len(res.Lines), res.More, res.Skipped)
	}
	last := -1
	for _, l := range res.Lines {
		var i int
		if _, err := fmt.Sscanf(l[strings.Index(l, `"i":`):], `"i":%d`, &i); err != nil || i%10 != 3 || i <= last {
			t.Fatalf("search lines out of order or wrong: %q", res.Lines)
		}
		last = i
	}
	if last != 193 {
		t.Fatalf("the newest match is %d, want 193", last)
	}
	// The scan budget: one block of 100 bytes finds at most a line.
	res, err = Tail(path, 4, Query{Contains: "no such text", MaxScan: 100})
	if err != nil || !res.More || res.Scanned != 100 || len(res.Lines) != 0 {
		t.Fatalf("bounded scan: %+v, %v", res, err)
	}
	// A log not written yet.
	res, err = Tail(filepath.Join(t.TempDir(), "none"), 4, Query{})
	if err != nil || len(res.Lines) != 0 || res.Lines == nil {
		t.Fatalf("missing log: %+v, %v", res, err)
	}
}

func TestTailSkipsLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.json")
	long := strings.Repeat("y", MaxLine+1)
	data := "first\n" + long + "\nmiddle\n" + long + "\n\nlast"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Tail(path, 1, Query{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Lines, []string{"first", "middle", "last"}) || res.Skipped != 2 {
		t.Fatalf("lines %q, skipped %d", res.Lines, res.Skipped)
	}
}

// backward splits any text into the lines bytes.Split finds, whatever the
// block boundaries.
func TestBackwardMatchesSplit(t *testing.T) {
	f := func(text []byte, cuts []uint8) bool {
		for i := range text {
			text[i] = "ab\n\r"[text[i]%4]
		}
		var want []string
		for _, l := range bytes.Split(text, []byte("\n")) {
			if l = bytes.TrimSuffix(l, []byte("\r")); len(l) > 0 {
				want = append(want, string(l))
			}
		}
		slices.Reverse(want)
		var got []string
		emit := func(l []byte) bool { got = append(got, string(l)); return false }
		var b backward
		end := len(text)
		for _, c := range cuts {
			if end == 0 {
				break
			}
			n := min(int(c%7)+1, end)
			b.feed(slices.Clone(text[end-n:end]), emit)
			end -= n
		}
		if end > 0 {
			b.feed(slices.Clone(text[:end]), emit)
		}
		b.finish(emit)
		return slices.Equal(got, want)
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000}); err != nil {
		t.Fatal(err)
	}
}

func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		q, line string
		want    bool
	}{{"", "x", true}, {"Warn", `"level":"WARN"`, true}, {"txid\":7", `"txid":7`, true}, {"nope", "yes", false}} {
		if got := NewMatcher(c.q).Match([]byte(c.line)); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.q, c.line, got)
		}
	}
}
