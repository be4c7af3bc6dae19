package logfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"
)

// Limits of Query and of Tail.
const (
	DefaultTail    = 100
	MaxTail        = 1000
	DefaultMaxScan = 64 << 20 // bytes read at most by one Tail
	MaxLine        = 16 << 10 // longer lines are left out (and counted)
	blockSize      = 64 << 10
)

// Query selects the lines Tail returns.
type Query struct {
	// Contains keeps the lines that contain it, ignoring case; empty
	// keeps every line.
	Contains string
	// Tail is how many of the last kept lines to return: DefaultTail if
	// zero or negative, at most MaxTail.
	Tail int
	// MaxScan bounds the bytes read, over all files: DefaultMaxScan if
	// zero or negative.
	MaxScan int64
	// Check, if not nil, is called with each file Tail opens (its Stat,
	// from the open descriptor) before it is read; an error refuses the
	// file, and Tail returns it. A reader of files someone else may plant
	// refuses more with it (a file with other hard links, say).
	Check func(fs.FileInfo) error
}

func (q Query) withDefaults() Query {
	if q.Tail <= 0 {
		q.Tail = DefaultTail
	}
	q.Tail = min(q.Tail, MaxTail)
	if q.MaxScan <= 0 {
		q.MaxScan = DefaultMaxScan
	}
	return q
}

// Result is what Tail found.
type Result struct {
	Lines   []string // oldest first, without their line ends
	Scanned int64    // bytes read
	// Skipped counts the lines longer than MaxLine that were left out.
	Skipped int
	// More is true when the scan stopped at MaxScan: earlier files or
	// lines were not searched.
	More bool
}

// Matcher reports whether a line is kept: it contains the query,
// ignoring case. It is pure.
type Matcher struct{ lower []byte }

// NewMatcher returns the Matcher of contains.
func NewMatcher(contains string) Matcher { return Matcher{lower: bytes.ToLower([]byte(contains))} }

// Match reports whether line is kept.
func (m Matcher) Match(line []byte) bool {
	if len(m.lower) == 0 {
		return true
	}
	return bytes.Contains(bytes.ToLower(line), m.lower)
}

// ErrNotRegular is the error of Tail meeting a log file that is not a
// regular file, or is a symbolic link.
var ErrNotRegular = errors.New("logfile: not a regular file")

// Tail returns the last lines of the log at path (the file written and
// the older ones, newest first, up to maxFiles in all) that q keeps. A
// missing file ends the search; a log not written yet has no lines.
//
// Tail does not follow a symbolic link in the last element of a file's
// name, and reads regular files only (not a FIFO or a device, which could
// block or never end): anything else is ErrNotRegular. So whoever can
// write in the log's directory (a worker whose log its supervisor serves)
// cannot point the reader at another file.
func Tail(path string, maxFiles int, q Query) (Result, error) {
	q = q.withDefaults()
	m := NewMatcher(q.Contains)
	var res Result
	var newestFirst []string
	for i := range max(maxFiles, 1) {
		f, err := openLog(Name(path, i), q.Check)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return res, err
		}
		var full bool
		newestFirst, full, err = tailFile(f, m, q, &res, newestFirst)
		f.Close()
		if err != nil {
			return res, err
		}
		if full || res.More {
			break
		}
	}
	slices.Reverse(newestFirst)
	res.Lines = newestFirst
	if res.Lines == nil {
		res.Lines = []string{}
	}
	return res, nil
}

// openLog opens a log file for Tail: not through a symbolic link, a
// regular file, accepted by check.
func openLog(name string, check func(fs.FileInfo) error) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if isLink(err) {
		return nil, fmt.Errorf("%w: %s is a symbolic link", ErrNotRegular, name)
	}
	if err != nil {
		return nil, fmt.Errorf("logfile: %w", err)
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("logfile: %w", err)
	case !st.Mode().IsRegular():
		err = fmt.Errorf("%w: %s is %v", ErrNotRegular, name, st.Mode().Type())
	case check != nil:
		err = check(st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tailFile appends the kept lines of f, newest first, to out until q.Tail
// lines are kept (full) or the scan budget runs out (res.More).
func tailFile(f *os.File, m Matcher, q Query, res *Result, out []string) ([]string, bool, error) {
	st, err := f.Stat()
	if err != nil {
		return out, false, fmt.Errorf("logfile: %w", err)
	}
	var b backward
	buf := make([]byte, blockSize)
	emit := func(line []byte) bool {
		if m.Match(line) {
			out = append(out, string(line))
		}
		return len(out) >= q.Tail
	}
	for end := st.Size(); end > 0; {
		if res.Scanned >= q.MaxScan {
			res.More = true
			return out, false, nil
		}
		n := min(int64(len(buf)), end, q.MaxScan-res.Scanned)
		end -= n
		if _, err := f.ReadAt(buf[:n], end); err != nil && !errors.Is(err, io.EOF) {
			return out, false, fmt.Errorf("logfile: %w", err)
		}
		res.Scanned += n
		if b.feed(buf[:n], emit) {
			res.Skipped += b.skipped
			return out, true, nil
		}
	}
	full := b.finish(emit)
	res.Skipped += b.skipped
	return out, full, nil
}

// backward splits a file read backwards, block by block, into lines,
// newest first. It keeps the partial line at the start of the blocks fed
// so far (at most MaxLine bytes: a longer line is skipped and counted).
type backward struct {
	carry    []byte // the start of the file's part fed so far, up to its first line end
	skipping bool   // the line being gathered is longer than MaxLine
	skipped  int
	started  bool // a block was fed: the file's last line end is behind
}

// feed takes the block before the ones fed so far and calls emit with
// each line it completes, newest first, until emit returns true (then
// feed does too). Empty lines are not emitted.
func (b *backward) feed(block []byte, emit func([]byte) bool) bool {
	b.started = true
	for len(block) > 0 {
		i := bytes.LastIndexByte(block, '\n')
		if i < 0 {
			b.gather(block)
			return false
		}
		// block[i+1:] + carry is a whole line.
		b.gather(block[i+1:])
		if b.complete(emit) {
			return true
		}
		block = block[:i]
	}
	return false
}

// gather prepends part to the line being gathered.
func (b *backward) gather(part []byte) {
	if b.skipping || len(part) == 0 {
		return
	}
	if len(b.carry)+len(part) > MaxLine {
		b.carry, b.skipping = b.carry[:0], true
		return
	}
	// A copy: part is in the reader's buffer, which the next block reuses.
	joined := make([]byte, 0, len(part)+len(b.carry))
	b.carry = append(append(joined, part...), b.carry...)
}

// complete ends the line gathered: it emits it, or counts it if skipped.
func (b *backward) complete(emit func([]byte) bool) bool {
	defer func() { b.carry, b.skipping = b.carry[:0], false }()
	if b.skipping {
		b.skipped++
		return false
	}
	line := bytes.TrimSuffix(b.carry, []byte("\r"))
	if len(line) == 0 {
		return false
	}
	return emit(line)
}

// finish ends the file: the gathered part is its first line.
func (b *backward) finish(emit func([]byte) bool) bool {
	if !b.started {
		return false
	}
	return b.complete(emit)
}

// ParseQuery reads a log query from a request's parameters: q (the text
// a line must contain) and tail (1 to MaxTail lines, default
// DefaultTail). Anything else in tail is an error naming the bounds.
func ParseQuery(v url.Values) (Query, error) {
	q := Query{Contains: v.Get("q"), Tail: DefaultTail}
	if s := v.Get("tail"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxTail {
			return q, fmt.Errorf("tail %q: want a number of lines from 1 to %d", s, MaxTail)
		}
		q.Tail = n
	}
	return q, nil
}
