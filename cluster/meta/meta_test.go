package meta

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLayoutKeys: every key sits under its prefix, under the cluster's
// prefix ("" and a trailing slash mean the default one), and slot keys
// parse back to their slot.
func TestLayoutKeys(t *testing.T) {
	s := Slot{Supervisor: "s1", Port: 6700}
	for _, l := range []Layout{New(""), New("/squall/"), {}} {
		if l.p() != DefaultPrefix {
			t.Fatalf("%+v: prefix %q, want %q", l, l.p(), DefaultPrefix)
		}
	}
	l := New("/c")
	for _, c := range []struct{ key, want string }{
		{l.Leader(), "/c/nimbus/leader"},
		{l.CodeRecord("t"), "/c/topologies/t"},
		{l.Holders("t", "ab"), "/c/code/t/ab/"},
		{l.Spec("t"), "/c/specs/t"},
		{l.Assignment("t"), "/c/assignments/t"},
		{l.Supervisor("s1"), "/c/supervisors/s1"},
		{l.Worker("t", s), "/c/workers/t/s1/6700"},
		{l.Status("t"), "/c/status/t"},
		{l.ErrorReport("t", s), "/c/errors/t/s1/6700"},
		{l.Generation("t"), "/c/generations/t"},
		{l.Credentials("t"), "/c/credentials/t"},
		{l.Coordination(), "/c/coordination"},
		{l.Crash("t", s), "/c/crashes/t/s1/6700"},
	} {
		if c.key != c.want {
			t.Errorf("key %q, want %q", c.key, c.want)
		}
	}
	for prefix, key := range map[string]string{l.Specs(): l.Spec("t"), l.Assignments(): l.Assignment("t"),
		l.Supervisors(): l.Supervisor("s1"), l.Workers(): l.Worker("t", s), l.Statuses(): l.Status("t"),
		l.ErrorReports(): l.ErrorReport("t", s), l.Crashes(): l.Crash("t", s)} {
		if !strings.HasPrefix(key, prefix) {
			t.Errorf("%q is not under %q", key, prefix)
		}
	}
	for _, key := range []string{l.Worker("t", s), l.Crash("t", s), l.ErrorReport("t", s)} {
		tail := key[strings.Index(key, "/t/")+len("/t/"):]
		if got, err := ParseSlotKey(tail); err != nil || got != s {
			t.Errorf("ParseSlotKey(%q) = %v, %v; want %v", tail, got, err, s)
		}
	}
	for _, bad := range []string{"s1", "s1/x", "s1/"} {
		if _, err := ParseSlotKey(bad); err == nil {
			t.Errorf("ParseSlotKey(%q) accepted", bad)
		}
	}
	if s.String() != "s1:6700" {
		t.Errorf("Slot.String() = %q", s)
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"wc", "room-presence_2", strings.Repeat("a", 200)} {
		if err := CheckName("topology", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "a b", "a\tb", "a\nb", strings.Repeat("a", 201)} {
		if err := CheckName("topology", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAssignmentShareAndHas(t *testing.T) {
	a := &Assignment{Workers: []Worker{{Slot: Slot{"s1", 1}}, {Slot: Slot{"s2", 1}}}}
	for i, w := range a.Workers {
		if a.Share(w.Slot) != i || !a.Has(w.Slot) {
			t.Errorf("slot %v: share %d, has %v", w.Slot, a.Share(w.Slot), a.Has(w.Slot))
		}
	}
	if other := (Slot{"s1", 2}); a.Share(other) != -1 || a.Has(other) {
		t.Errorf("a slot not assigned has share %d", a.Share(other))
	}
}

// TestExitCodeFile: a code written after the worker's start is read back;
// none, an older one, a link, a large file or garbage is not.
func TestExitCodeFile(t *testing.T) {
	dir := t.TempDir()
	start := time.Now().Add(-time.Minute)
	if _, ok := ReadExitCode(dir, start); ok {
		t.Fatal("a code read from an empty directory")
	}
	WriteExitCode(dir, ExitReassigned)
	if code, ok := ReadExitCode(dir, start); !ok || code != ExitReassigned {
		t.Fatalf("ReadExitCode = %d, %v; want %d", code, ok, ExitReassigned)
	}
	if _, ok := ReadExitCode(dir, time.Now().Add(time.Minute)); ok {
		t.Fatal("a code written before the worker's start was read")
	}
	path := filepath.Join(dir, ExitCodeFile)
	for name, write := range map[string]func() error{
		"garbage": func() error { return os.WriteFile(path, []byte("seventeen\n"), 0o600) },
		"large":   func() error { return os.WriteFile(path, []byte(strings.Repeat(" ", 40)+"17"), 0o600) },
		"a link": func() error {
			other := filepath.Join(t.TempDir(), "code")
			if err := os.WriteFile(other, []byte("17\n"), 0o600); err != nil {
				return err
			}
			os.Remove(path)
			return os.Symlink(other, path)
		},
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		if code, ok := ReadExitCode(dir, start); ok {
			t.Errorf("%s: read %d", name, code)
		}
		os.Remove(path)
	}
}

// TestRecordRoundTrip: records survive Encode and Decode; Decode names
// the key of a bad record.
func TestRecordRoundTrip(t *testing.T) {
	in := Crash{Topology: "t", Slot: Slot{"s1", 6700}, Artifact: "ab", Failures: 2, Crashes: 3, Last: "exit 1",
		Time: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	var out Crash
	if err := Decode("k", []byte(Encode(in)), &out); err != nil || out != in {
		t.Fatalf("round trip: %+v, %v; want %+v", out, err, in)
	}
	if err := Decode("/c/crashes/t", []byte("{"), &out); err == nil || !strings.Contains(err.Error(), "/c/crashes/t") {
		t.Fatalf("a bad record: %v", err)
	}
}
