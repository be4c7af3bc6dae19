package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/nemesis"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestParseConfig(t *testing.T) {
	c, err := parseConfig(nil, env(map[string]string{"PARTITION_SCHEDULES": "3", "PARTITION_SEED": "42",
		"PARTITION_DIR": "/tmp/x", "PARTITION_MUTANT": "forgetful"}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.schedules != 3 || c.seed != 42 || c.dir != "/tmp/x" || c.mutant != "forgetful" || c.bound != 60*time.Second {
		t.Errorf("config %+v", c)
	}
	// The flag wins over the variable.
	c, err = parseConfig([]string{"-seed", "7", "-schedules", "1"}, env(map[string]string{"PARTITION_SEED": "42"}), &bytes.Buffer{})
	if err != nil || c.seed != 7 || c.schedules != 1 {
		t.Errorf("config %+v, %v", c, err)
	}
	// Without either, a seed from the clock, never 0.
	if c, err := parseConfig(nil, env(nil), &bytes.Buffer{}); err != nil || c.seed == 0 || c.schedules != 2 {
		t.Errorf("config %+v, %v", c, err)
	}
	for _, bad := range []map[string]string{{"PARTITION_SEED": "x"}, {"PARTITION_MUTANT": "lazy"}, {"PARTITION_SCHEDULES": "0"}} {
		if _, err := parseConfig(nil, env(bad), &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// TestSkipOrFailWithoutRoot: outside root the harness skips with a
// reason and exits 0, and fails under CI.
func TestSkipOrFailWithoutRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("runs as root: preflight passes here")
	}
	var out bytes.Buffer
	if code := mainExit(nil, env(nil), &out, &out); code != 0 || !strings.HasPrefix(out.String(), "partitions: SKIP: not root") {
		t.Errorf("exit %d, output %q", code, out.String())
	}
	out.Reset()
	if code := mainExit(nil, env(map[string]string{"CI": "true"}), &out, &out); code != 1 || !strings.Contains(out.String(), "FAIL") {
		t.Errorf("under CI: exit %d, output %q", code, out.String())
	}
}

func TestFiguresByKind(t *testing.T) {
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	rs := []result{
		{Episodes: []episodeResult{{Kinds: []nemesis.Kind{nemesis.Split}, ToCommit: s(3), Live: true},
			{Kinds: []nemesis.Kind{nemesis.Freeze, nemesis.Kill}, ToCommit: s(10), Live: true}}},
		{Episodes: []episodeResult{{Kinds: []nemesis.Kind{nemesis.Split}, ToCommit: s(1), Live: true},
			{Kinds: []nemesis.Kind{nemesis.Split}, Live: false}, {Kinds: []nemesis.Kind{nemesis.Kill, nemesis.Kill}, ToCommit: s(2), Live: true}}},
	}
	got := map[nemesis.Kind]kindFigures{}
	for _, f := range figuresByKind(rs) {
		got[f.Kind] = f
	}
	if f := got[nemesis.Split]; f.N != 2 || f.Failures != 1 || f.Median != s(2) || f.Max != s(3) {
		t.Errorf("split: %+v", f)
	}
	if f := got[nemesis.Kill]; f.N != 2 || f.Median != s(6) || f.Max != s(10) {
		t.Errorf("kill: %+v", f)
	}
	if f := got[nemesis.Freeze]; f.N != 1 || f.Median != s(10) {
		t.Errorf("freeze: %+v", f)
	}
}

// TestSplitBrainDetector: an older generation publishing a commit beyond
// where a newer one started is reported; its late status up to that
// point is not.
func TestSplitBrainDetector(t *testing.T) {
	o := &observer{changed: make(chan struct{}), base: map[uint64]uint64{}, timeline: func(string, ...any) {}}
	put := func(gen, committed uint64) {
		o.record([]byte(`{"generation":` + itoa(gen) + `,"committed":` + itoa(committed) + `,"pid":1}`))
	}
	put(1, 5)
	put(1, 9)
	put(2, 0) // the new owner before its loaded commit
	put(2, 9)
	put(1, 9) // the old owner's last status, late: no commit past 9
	if s := o.splitBrains(); len(s) != 0 {
		t.Fatalf("split brains %v", s)
	}
	if st, _ := o.status(); st.Generation != 2 {
		t.Errorf("last status %+v: want generation 2's", st)
	}
	put(2, 11)
	put(1, 10) // the old owner committed after the new one started from 9
	if s := o.splitBrains(); len(s) != 1 || !strings.Contains(s[0], "generation 1") {
		t.Fatalf("split brains %v", s)
	}
}

// TestLostCommitDetector: a committed txid that goes back under the same
// or a newer generation is reported.
func TestLostCommitDetector(t *testing.T) {
	o := &observer{changed: make(chan struct{}), base: map[uint64]uint64{}, timeline: func(string, ...any) {}}
	put := func(gen, committed uint64) {
		o.record([]byte(`{"generation":` + itoa(gen) + `,"committed":` + itoa(committed) + `,"pid":1}`))
	}
	put(1, 15)
	put(2, 0) // before its load
	put(2, 15)
	put(2, 18)
	put(1, 15) // the old owner, late
	if s := o.splitBrains(); len(s) != 0 {
		t.Fatalf("split brains %v", s)
	}
	put(3, 16) // the record went back from 18
	if s := o.splitBrains(); len(s) != 1 || !strings.Contains(s[0], "a commit was lost") {
		t.Fatalf("split brains %v", s)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
