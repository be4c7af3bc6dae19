package supervisor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
)

// The artifacts are shell scripts: a worker that runs until SIGTERM, one
// that exits at once with a given code.
const (
	sleeper = "#!/bin/sh\necho \"$@\" > args\ntrap 'exit 0' TERM\nwhile :; do sleep 0.05; done\n"
	exiter  = "#!/bin/sh\nexit %s\n"
)

type env struct {
	t    *testing.T
	cli  *clientv3.Client
	keys meta.Layout
	code map[string]string // digest → content
	srv  *httptest.Server
}

func newEnv(t *testing.T) *env {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	e := &env{t: t, cli: cli, keys: meta.New("/t"), code: map[string]string{}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := e.code[strings.TrimPrefix(r.URL.Path, "/code/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(c))
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// artifact publishes content as topology's code and returns its digest.
func (e *env) artifact(topology, content string) string {
	sum := sha256.Sum256([]byte(content))
	dg := hex.EncodeToString(sum[:])
	e.code[dg] = content
	e.put(e.keys.Holders(topology, dg)+"n1", e.srv.URL)
	return dg
}

func (e *env) put(k, v string) {
	e.t.Helper()
	if _, err := e.cli.Put(context.Background(), k, v); err != nil {
		e.t.Fatal(err)
	}
}

// get reads a key ("" when absent).
func (e *env) get(k string) string {
	e.t.Helper()
	resp, err := e.cli.Get(context.Background(), k)
	if err != nil || len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func (e *env) assign(topology, artifact string, slots ...meta.Slot) {
	a := meta.Assignment{Topology: topology, Artifact: artifact, Status: meta.Active}
	for _, s := range slots {
		a.Workers = append(a.Workers, meta.Worker{Slot: s})
	}
	e.put(e.keys.Assignment(topology), meta.Encode(a))
}

// run starts a supervisor on dir; stop ends it (leaving its workers).
func (e *env) run(id, dir string, mod func(*Config)) (s *Supervisor, stop func()) {
	cfg := Config{Client: e.cli, Prefix: "/t", ID: id, Ports: []int{7000, 7001}, DataDir: dir, TTL: time.Second,
		Grace: 2 * time.Second, MinUptime: time.Second, RestartBackoff: 10 * time.Millisecond,
		MaxRestartBackoff: 50 * time.Millisecond, PollInterval: 20 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	var once bool
	stop = func() {
		if !once {
			once = true
			cancel()
			<-done
		}
	}
	e.t.Cleanup(stop)
	return s, stop
}

func pidOf(t *testing.T, dir string, port int) int {
	rec, err := readRecord(PidFile(dir, port), false)
	if err != nil {
		return 0
	}
	return rec.PID
}

// eventually polls a process-level condition (no etcd event to wait on).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func killAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() { syscallKill(pid) })
}

func TestStartsStopsAndAdoptsWorkers(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	slot := meta.Slot{Supervisor: "s1", Port: 7000}
	dg := e.artifact("t1", sleeper)
	s1, stop1 := e.run("s1", dir, nil)
	etcdtest.WaitFor(t, e.cli, e.keys.Supervisors(), 10*time.Second, "registration", func(kv map[string]string) bool { return len(kv) == 1 })
	e.assign("t1", dg, slot)

	var pid int
	eventually(t, "a worker started", func() bool { pid = pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pid)
	eventually(t, "its arguments written", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "workers", "7000", "args"))
		return strings.HasPrefix(string(b), "worker --topology t1 --supervisor s1 --port 7000 --data-dir ")
	})

	// The supervisor stops (as if it died): the worker runs on.
	stop1()
	if !alive(pid) {
		t.Fatal("the worker died with its supervisor")
	}
	etcdtest.WaitFor(t, e.cli, e.keys.Supervisors(), 10*time.Second, "deregistration", func(kv map[string]string) bool { return len(kv) == 0 })

	// Started again on the same directory, it adopts the worker.
	s2, _ := e.run("s1", dir, nil)
	etcdtest.WaitFor(t, e.cli, e.keys.Supervisors(), 10*time.Second, "registration", func(kv map[string]string) bool { return len(kv) == 1 })
	time.Sleep(200 * time.Millisecond) // a window for a wrong start to show
	if n := s2.Starts(); n != 0 || pidOf(t, dir, 7000) != pid {
		t.Fatalf("after a restart: %d starts, pid file %d; want the worker %d adopted", n, pidOf(t, dir, 7000), pid)
	}

	// The adopted worker dies: restarted.
	syscallKill(pid)
	var pid2 int
	eventually(t, "a restart of the adopted worker", func() bool {
		pid2 = pidOf(t, dir, 7000)
		return pid2 > 0 && pid2 != pid && alive(pid2)
	})
	killAtEnd(t, pid2)

	// Unassigned: stopped, pid file removed.
	e.assign("t1", dg)
	eventually(t, "the worker stopped", func() bool { return !alive(pid2) && pidOf(t, dir, 7000) == 0 })
	_ = s1
}

func TestCrashesAreReportedAndSupersededIsNot(t *testing.T) {
	e := newEnv(t)
	crash := e.artifact("t1", strings.Replace(exiter, "%s", "3", 1))
	superseded := e.artifact("t2", strings.Replace(exiter, "%s", strconv.Itoa(meta.ExitSuperseded), 1))
	s, _ := e.run("s1", t.TempDir(), nil)
	e.assign("t1", crash, meta.Slot{Supervisor: "s1", Port: 7000})
	e.assign("t2", superseded, meta.Slot{Supervisor: "s1", Port: 7001})
	etcdtest.WaitFor(t, e.cli, e.keys.Crashes(), 30*time.Second, "three start failures of t1", func(kv map[string]string) bool {
		var c meta.Crash
		v, ok := kv[e.keys.Crash("t1", meta.Slot{Supervisor: "s1", Port: 7000})]
		return ok && meta.Decode("", []byte(v), &c) == nil && c.Failures >= 3 && c.Crashes >= 3 && c.Artifact == crash
	})
	eventually(t, "restarts", func() bool { return s.Starts() >= 10 })
	resp, err := e.cli.Get(context.Background(), e.keys.Crash("t2", meta.Slot{Supervisor: "s1", Port: 7001}))
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("a superseded worker was reported as a crash: %v %v", resp.Kvs, err)
	}
	// Unassigned: the report goes.
	e.assign("t1", crash)
	etcdtest.WaitFor(t, e.cli, e.keys.Crashes(), 30*time.Second, "the report removed", func(kv map[string]string) bool {
		_, ok := kv[e.keys.Crash("t1", meta.Slot{Supervisor: "s1", Port: 7000})]
		return !ok
	})
}

func TestCorruptArtifactIsNotRun(t *testing.T) {
	e := newEnv(t)
	dg := e.artifact("t1", sleeper)
	e.code[dg] = sleeper + "# tampered\n"
	dir := t.TempDir()
	e.run("s1", dir, nil)
	e.assign("t1", dg, meta.Slot{Supervisor: "s1", Port: 7000})
	etcdtest.WaitFor(t, e.cli, e.keys.Crashes(), 30*time.Second, "a failure to fetch", func(kv map[string]string) bool {
		for _, v := range kv {
			return strings.Contains(v, "sha256") || strings.Contains(v, "corrupt")
		}
		return false
	})
	if pidOf(t, dir, 7000) != 0 {
		t.Fatal("a worker started from a corrupt artifact")
	}
}

// TestRelativeDataDir: a supervisor given a relative data directory (the
// command's default) starts its workers: paths handed to them are
// absolute, though they run in their slot's directory.
func TestRelativeDataDir(t *testing.T) {
	e := newEnv(t)
	t.Chdir(t.TempDir())
	e.run("s1", "squall-data/supervisor", nil)
	abs, err := filepath.Abs("squall-data/supervisor")
	if err != nil {
		t.Fatal(err)
	}
	e.assign("t1", e.artifact("t1", sleeper), meta.Slot{Supervisor: "s1", Port: 7000})
	eventually(t, "a worker started from a relative data dir", func() bool { pid := pidOf(t, abs, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pidOf(t, abs, 7000))
}

// TestDuplicateIDRefused: a second supervisor with the same ID refuses
// to run (and starts nothing) while the first is alive; a registration
// deleted under a live supervisor is made again.
func TestDuplicateIDRefused(t *testing.T) {
	e := newEnv(t)
	e.run("dup", t.TempDir(), nil)
	eventually(t, "the first registration", func() bool { return e.get(e.keys.Supervisor("dup")) != "" })
	dir := t.TempDir()
	second, err := New(Config{Client: e.cli, Prefix: "/t", ID: "dup", Ports: []int{7000}, DataDir: dir, TTL: time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e.assign("t1", e.artifact("t1", sleeper), meta.Slot{Supervisor: "dup", Port: 7000})
	err = second.Run(ctx)
	if !errors.Is(err, ErrDuplicateID) || !strings.Contains(err.Error(), "--id") {
		t.Fatalf("the duplicate's Run: %v, want ErrDuplicateID naming --id", err)
	}
	if second.Starts() != 0 {
		t.Fatalf("the duplicate started %d workers", second.Starts())
	}
	if _, err := e.cli.Delete(ctx, e.keys.Supervisor("dup")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted registration made again", func() bool { return e.get(e.keys.Supervisor("dup")) != "" })
}

// TestAdoptedWorkerExitIsNotACrash: an adopted worker (not this
// process's child) that exits reassigned, as it wrote in its exit-code
// file, is started again without a crash report.
func TestAdoptedWorkerExitIsNotACrash(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	script := "#!/bin/sh\ntrap 'echo " + strconv.Itoa(meta.ExitReassigned) + " > " + meta.ExitCodeFile + "; exit " +
		strconv.Itoa(meta.ExitReassigned) + "' USR1\ntrap 'exit 0' TERM\nwhile :; do sleep 0.05; done\n"
	dg := e.artifact("t1", script)
	_, stop1 := e.run("s1", dir, nil)
	e.assign("t1", dg, meta.Slot{Supervisor: "s1", Port: 7000})
	var pid int
	eventually(t, "a worker started", func() bool { pid = pidOf(t, dir, 7000); return pid > 0 && alive(pid) })
	killAtEnd(t, pid)
	stop1()
	s2, _ := e.run("s1", dir, nil)
	time.Sleep(300 * time.Millisecond) // adopted
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var pid2 int
	eventually(t, "the adopted worker started again", func() bool {
		pid2 = pidOf(t, dir, 7000)
		return pid2 > 0 && pid2 != pid && alive(pid2)
	})
	killAtEnd(t, pid2)
	if c := e.get(e.keys.Crash("t1", meta.Slot{Supervisor: "s1", Port: 7000})); c != "" {
		t.Fatalf("a reassigned adopted worker was reported as a crash: %s", c)
	}
	if s2.Starts() != 1 {
		t.Fatalf("%d starts, want 1", s2.Starts())
	}
}

// TestFixedPorts: with FixedPorts a slot's worker is told to listen on
// the slot's port (transport) and on the port + MonitorPortOffset
// (monitor), after the other arguments so that they win.
func TestFixedPorts(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	e.run("s1", dir, func(c *Config) {
		c.WorkerArgs = []string{"--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"}
		c.WorkerHost, c.FixedPorts, c.MonitorPortOffset = "127.0.0.1", true, 500
	})
	e.assign("t1", e.artifact("t1", sleeper), meta.Slot{Supervisor: "s1", Port: 7001})
	eventually(t, "the worker's arguments", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "workers", "7001", "args"))
		return strings.HasSuffix(strings.TrimSpace(string(b)), "--listen 127.0.0.1:7001 --http 127.0.0.1:7501")
	})
	killAtEnd(t, pidOf(t, dir, 7001))
	if err := (Config{Client: e.cli, DataDir: dir, ID: "x", Ports: []int{65500}, FixedPorts: true, WorkerHost: "h"}).Validate(); err == nil {
		t.Fatal("a monitor port beyond 65535 was accepted")
	}
}
