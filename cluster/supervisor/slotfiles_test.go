package supervisor

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/clock"
)

// The slot's directory belongs to its worker when it runs as another
// user: what a worker plants there (links, forged files) must not lead
// the supervisor, root, to write, read or signal anything else. These
// tests plant as root what a worker could plant.

// victim starts a process of the given user (nil: the test's) in its own
// process group, killed at the end of the test.
func victim(t *testing.T, cred *syscall.Credential) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscallKill(cmd.Process.Pid); cmd.Wait() })
	return cmd
}

// secretFile is a file of root's, outside any slot, that a worker wants.
func secretFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("root:the secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func unchanged(t *testing.T, path, want string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Errorf("%s changed through a planted link: %q, %v", path, b, err)
	}
}

// (a) The pid file is written out of the slot's directory: links planted
// where it used to be are not written through.
func TestPidFileIsNotWrittenInTheSlot(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	slot := filepath.Join(dir, "workers", "7000")
	if err := os.MkdirAll(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := secretFile(t)
	for _, name := range []string{"worker.json.tmp", "worker.json"} {
		if err := os.Symlink(secret, filepath.Join(slot, name)); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := e.run("s1", dir, nil)
	e.assign("t1", e.artifact("t1", sleeper), meta.Slot{Supervisor: "s1", Port: 7000})
	eventually(t, "a worker started", func() bool { return s.Starts() > 0 })
	unchanged(t, secret, "root:the secret\n")
	var pid int
	eventually(t, "its pid file written", func() bool { pid = pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pid)
	info, err := os.Stat(filepath.Join(dir, RecordsDir))
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the pid files' directory: %v, %v; want mode 0700", info.Mode(), err)
	}
	if uid, _, mode := owner(t, PidFile(dir, 7000)); uid != uint32(os.Geteuid()) || mode.Perm() != 0o600 {
		t.Errorf("the pid file: owner %d mode %v; want the supervisor's, 0600", uid, mode.Perm())
	}
}

// writeRecord never writes through a link at its temporary file's name.
func TestWriteRecordRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	secret := secretFile(t)
	path := filepath.Join(dir, "7000.json")
	if err := os.Symlink(secret, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := writeRecord(path, record{PID: 42}); err != nil {
		t.Fatal(err)
	}
	unchanged(t, secret, "root:the secret\n")
	if rec, err := readRecord(path, false); err != nil || rec.PID != 42 {
		t.Fatalf("readRecord = %+v, %v", rec, err)
	}
	// Nor reads through one.
	os.Remove(path)
	os.Symlink(path+".elsewhere", path)
	writeRecord(path+".elsewhere", record{PID: 43})
	if rec, err := readRecord(path, false); err == nil {
		t.Errorf("readRecord followed a link: %+v", rec)
	}
}

// (b) A pid file a worker forged in its slot's directory is not trusted:
// the supervisor does not adopt (and later signal) the process it names.
// One the supervisor's user wrote there (an earlier version's) still is,
// once, moved out of the slot.
func TestForgedPidFileInTheSlotIsNotTrusted(t *testing.T) {
	needRoot(t) // to give the forged file to another user
	e := newEnv(t)
	dir := t.TempDir()
	slot := filepath.Join(dir, "workers", "7000")
	if err := os.MkdirAll(slot, 0o700); err != nil {
		t.Fatal(err)
	}
	// The forged record names a process of root's, "running" a topology
	// not assigned here: adopted, it would be stopped (SIGTERM, SIGKILL to
	// its process group).
	v := victim(t, nil)
	forged := record{PID: v.Process.Pid, Topology: "gone", Artifact: strings.Repeat("ab", 32), Path: "sleep",
		Port: 7000, Started: time.Now(), StartTime: startTime(v.Process.Pid)}
	legacy := filepath.Join(slot, legacyRecord)
	if err := writeRecord(legacy, forged); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(legacy, 65534, 65534); err != nil { // the worker's
		t.Fatal(err)
	}
	s, stop := e.run("s1", dir, nil)
	e.assign("t1", e.artifact("t1", sleeper), meta.Slot{Supervisor: "s1", Port: 7000})
	var pid int
	eventually(t, "a worker started", func() bool { pid = pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pid)
	time.Sleep(100 * time.Millisecond) // a window for a wrong stop to show
	if !alive(v.Process.Pid) || pid == v.Process.Pid || s.Starts() != 1 {
		t.Fatalf("the forged pid file was trusted: victim alive %v, slot's pid %d (victim %d), %d starts",
			alive(v.Process.Pid), pid, v.Process.Pid, s.Starts())
	}
	if _, err := os.Lstat(legacy); err == nil {
		t.Error("the forged pid file is still in the slot")
	}

	// The supervisor's own pid file where an earlier version kept it: the
	// worker is adopted and the file moved.
	stop()
	if err := os.Rename(PidFile(dir, 7000), legacy); err != nil {
		t.Fatal(err)
	}
	s2, _ := e.run("s1", dir, nil)
	eventually(t, "the pid file moved back out of the slot", func() bool { return pidOf(t, dir, 7000) == pid })
	time.Sleep(200 * time.Millisecond) // a window for a wrong start to show
	if n := s2.Starts(); n != 0 || !alive(pid) {
		t.Fatalf("an earlier version's pid file: %d starts, worker alive %v; want it adopted", n, alive(pid))
	}
	if _, err := os.Lstat(legacy); err == nil {
		t.Error("the earlier version's pid file is still in the slot")
	}
}

// (b) adopt checks the user of the process: a live process running the
// expected program and started when the record says, but as another
// user, is not adopted.
func TestAdoptChecksTheUser(t *testing.T) {
	needRoot(t)
	v := victim(t, &syscall.Credential{Uid: 65534, Gid: 65534})
	rec := record{PID: v.Process.Pid, Path: "sleep", StartTime: startTime(v.Process.Pid)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := adopt(ctx, rec, workerUIDs{0, 0}, clock.Real(), time.Hour); err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Errorf("a process of uid 65534 adopted as root's: %v", err)
	}
	if _, err := adopt(ctx, rec, workerUIDs{65534, 65534}, clock.Real(), time.Hour); err != nil {
		t.Errorf("a process of uid 65534 not adopted as 65534's: %v", err)
	}
	if got, err := procUIDs(os.Getpid()); err != nil || got != (workerUIDs{uint32(os.Getuid()), uint32(os.Geteuid())}) {
		t.Errorf("procUIDs(self) = %+v, %v", got, err)
	}
}

// (c) The log server does not follow links (or other hard links) the
// worker planted as its log files, nor blocks on a FIFO.
func TestLogServerRefusesPlantedFiles(t *testing.T) {
	for name, plant := range map[string]func(path, secret string) error{
		"a symbolic link": func(p, secret string) error { return os.Symlink(secret, p) },
		"a hard link":     func(p, secret string) error { return os.Link(secret, p) },
		"a FIFO":          func(p, _ string) error { return syscall.Mkfifo(p, 0o600) },
	} {
		for _, file := range []string{WorkerLogFile, WorkerOutputFile, WorkerLogFile + ".1"} {
			secret := secretFile(t) // fresh: a hard link to it made earlier would count
			dir := t.TempDir()
			ts := logServerAt(t, dir, "secret", nil)
			slot := filepath.Join(dir, "workers", "7000")
			path := filepath.Join(slot, file)
			os.Remove(path)
			if file != WorkerLogFile {
				// A regular newest log, so the rotated file is read.
				os.WriteFile(filepath.Join(slot, WorkerLogFile), []byte("{}\n"), 0o600)
			}
			if err := plant(path, secret); err != nil {
				t.Fatal(err)
			}
			url := ts.URL + "/logs/7000?tail=1000"
			if file == WorkerOutputFile {
				url += "&output=1"
			}
			code, body := get(t, ts.Client(), url, map[string]string{"Authorization": "Bearer secret"})
			if code != http.StatusForbidden || strings.Contains(body, "the secret") {
				t.Errorf("%s as %s: %d %q, want 403", name, file, code, body)
			}
		}
	}
}

// (d) The worker's certificate is written in a directory the supervisor
// makes afresh out of the slot: a link the worker planted at the old
// place (<slot>/certs) or a stale directory is not written through; with
// RunAs the worker's group can read the key, not change it.
func TestWorkerCertificateIsNotWrittenInTheSlot(t *testing.T) {
	needRoot(t)
	now := time.Now()
	ca, err := pki.NewAuthority("test", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	sup, err := ca.Issue(pki.Request{Role: pki.Supervisor, Name: "s1", Hosts: []string{"127.0.0.1"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	for _, runAs := range []*RunAs{nil, {UID: 65534, GID: 65534}} {
		root := t.TempDir()
		for _, d := range []string{filepath.Dir(root), root} {
			os.Chmod(d, 0o711) // the worker user passes them, as it must a real data directory's parents
		}
		dir := filepath.Join(root, "data")
		slot := filepath.Join(dir, "workers", "7000")
		os.MkdirAll(slot, 0o700)
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(slot, "certs")); err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Client: e.cli, ID: "s1", Ports: []int{7000}, DataDir: dir, Bundle: sup,
			Isolation: Isolation{RunAs: runAs}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		// A stale directory (a link to another, say) where the new one goes.
		os.MkdirAll(filepath.Join(dir, WorkerCertsDir), 0o700)
		if err := os.Symlink(outside, filepath.Join(dir, WorkerCertsDir, "7000")); err != nil {
			t.Fatal(err)
		}
		certs, err := s.issueWorker("t1", 7000)
		if err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("RunAs %v: the certificate was written through a planted link: %v", runAs, entries)
		}
		if certs != filepath.Join(dir, WorkerCertsDir, "7000") {
			t.Errorf("the worker's certificates are in %s", certs)
		}
		if b, err := pki.LoadBundle(certs); err != nil || b.Identity().Name != pki.WorkerName("t1", 0) {
			t.Fatalf("the worker's bundle: %v", err)
		}
		wantGID, dirMode, keyMode := uint32(os.Getegid()), os.FileMode(0o700), os.FileMode(0o600)
		if runAs != nil {
			wantGID, dirMode, keyMode = 65534, 0o750, 0o640
		}
		for path, want := range map[string]os.FileMode{certs: dirMode, filepath.Join(certs, pki.KeyFile): keyMode} {
			uid, gid, mode := owner(t, path)
			if uid != 0 || gid != wantGID || mode.Perm() != want {
				t.Errorf("RunAs %v: %s is %d:%d %v, want 0:%d %v", runAs, path, uid, gid, mode.Perm(), wantGID, want)
			}
		}
		if runAs == nil {
			continue
		}
		// The worker user reads its key and cannot write beside it.
		as := func(name string, args ...string) error {
			cmd := exec.Command(name, args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			return cmd.Run()
		}
		if err := as("cat", filepath.Join(certs, pki.KeyFile)); err != nil {
			t.Errorf("the worker user cannot read its key: %v", err)
		}
		if err := as("touch", filepath.Join(certs, "planted")); err == nil {
			t.Error("the worker user can write in its certificate directory")
		}
	}
}

// chownTree leaves a file with other hard links to its owner: a worker
// could have linked a file from elsewhere into its directory.
func TestChownTreeLeavesHardLinks(t *testing.T) {
	needRoot(t)
	secret := secretFile(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "own"), nil, 0o600)
	if err := os.Link(secret, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	left := 100
	linked, err := chownTree(dir, 65534, 65534, &left)
	if err != nil || linked != 1 {
		t.Fatalf("chownTree = %d, %v; want 1 file left", linked, err)
	}
	if uid, _, _ := owner(t, secret); uid != 0 {
		t.Errorf("a hard-linked file was given to uid %d", uid)
	}
	if uid, _, _ := owner(t, filepath.Join(dir, "own")); uid != 65534 {
		t.Errorf("the worker's own file belongs to %d", uid)
	}
}

// launchIsolated does not append the worker's output to a file linked
// into the slot from elsewhere.
func TestOutputFileIsNotAHardLink(t *testing.T) {
	secret := secretFile(t)
	slot := t.TempDir()
	out := filepath.Join(slot, WorkerOutputFile)
	if err := os.Link(secret, out); err != nil {
		t.Fatal(err)
	}
	p, _, err := launchIsolated(nil, 7000, "/bin/echo", []string{"appended"}, nil, slot, out)
	if err == nil {
		<-p.done
		t.Error("a worker started with its output going to a hard link")
	}
	unchanged(t, secret, "root:the secret\n")
}
