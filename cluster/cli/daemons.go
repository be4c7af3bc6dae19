package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/squallstream/squall/cluster/etcdembed"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/nimbus"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/cluster/supervisor"
	"github.com/squallstream/squall/cluster/worker"
	"github.com/squallstream/squall/internal/httpguard"
)

func runNimbus(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("nimbus", flag.ContinueOnError)
	var e etcdFlags
	var lf logFlags
	e.register(fs)
	lf.register(fs, "info")
	listen := fs.String("listen", "127.0.0.1:6627", "address of the nimbus's HTTP server (code for the other nimbuses and the supervisors, the API)")
	advertise := fs.String("advertise", "", "address (host:port) others reach this nimbus at; it is the nimbus's ID (default: the listening address)")
	dataDir := fs.String("data-dir", "squall-data/nimbus", "directory of the artifacts this nimbus keeps")
	ttl := fs.Duration("ttl", 10*time.Second, "lease TTL of the election and code holder keys: the leader failover time")
	rf := fs.Int("replication", 1, "nimbus hosts that must hold a topology's code before it runs")
	maxArtifact := fs.Int64("max-artifact-bytes", nimbus.DefaultMaxArtifactBytes, "largest artifact a submit may upload")
	workerCreds := fs.Bool("worker-credentials", false, "give each topology's workers an etcd user limited to its keys "+
		"(etcd with authentication, see the etcd-auth command; this nimbus must connect as etcd's root user)")
	var cf certFlags
	cf.register(fs, "nimbus")
	if _, err := parse(p, fs, "nimbus", args, 0); err != nil {
		return err
	}
	bundle, err := cf.load(pki.Nimbus)
	if err != nil {
		return usageError("%v", err)
	}
	log, logs, err := lf.logger(p.Stderr)
	if err != nil {
		return usageError("%v", err)
	}
	defer logs.Close()
	if *rf < 1 {
		return usageError("--replication %d: want at least 1", *rf)
	}
	cli, err := e.client()
	if err != nil {
		return err
	}
	defer cli.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	id := *advertise
	if id == "" {
		id = ln.Addr().String()
	}
	if bundle == nil && !httpguard.LoopbackAddr(ln.Addr().String()) {
		ln.Close()
		return usageError("--listen %s: %v", *listen, errNoCerts)
	}
	n, err := nimbus.New(nimbus.Config{Client: cli, Prefix: e.prefix, ID: id, Listener: ln, CodeDir: *dataDir,
		TTL: *ttl, ReplicationFactor: *rf, Bundle: bundle, MaxArtifactBytes: *maxArtifact, WorkerCredentials: *workerCreds, Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("nimbus: serving", "id", id, "listen", ln.Addr().String(), "etcd", e.endpoints)
	if err := n.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// supervisorFlags are the flags of the supervisor command (and of dev).
type supervisorFlags struct {
	id        string
	slots     int
	firstPort int
	dataDir   string
	ttl       time.Duration
	grace     time.Duration
	minUptime time.Duration
	host      string
	listen    string
	tokenFile string
	certs     certFlags
	// Fixed ports of the workers (supervisor.Config.FixedPorts).
	fixedPorts    bool
	monitorOffset int
	// Isolation of the workers (supervisor.Isolation); zero values
	// confine nothing.
	workerUser         string
	workerMemory       byteSize
	workerOpenFiles    uint64
	workerPids         int64
	workerCgroupParent string
	// Capacity published to the scheduler (supervisor.Config.Capacity).
	capacity capacityFlags
}

func (s *supervisorFlags) register(fs *flag.FlagSet, dataDir string) {
	host, _ := os.Hostname()
	fs.StringVar(&s.id, "id", host, "supervisor ID, unique and stable across restarts (default: the host name)")
	fs.IntVar(&s.slots, "slots", 4, "worker slots of this supervisor")
	fs.IntVar(&s.firstPort, "first-port", 6700, "port of the first slot; the slots are numbered from it")
	fs.StringVar(&s.dataDir, "data-dir", dataDir, "directory of artifacts, worker pid files and logs")
	fs.DurationVar(&s.ttl, "ttl", 10*time.Second, "lease TTL of the supervisor's registration: how soon its death is noticed")
	fs.DurationVar(&s.grace, "grace", 10*time.Second, "wait between SIGTERM and SIGKILL when a worker stops")
	fs.DurationVar(&s.minUptime, "min-uptime", 10*time.Second, "a worker exiting sooner after its start failed to start")
	fs.StringVar(&s.host, "worker-host", "127.0.0.1", "host (name or IP) the workers listen on for the other workers of their topology")
	fs.StringVar(&s.listen, "listen", "127.0.0.1:0", "address of the workers' log server (GET /logs/{port}); empty: none")
	fs.StringVar(&s.tokenFile, "token-file", "", "file holding the bearer token log requests may carry instead of a certificate")
	s.certs.register(fs, "supervisor")
	fs.BoolVar(&s.fixedPorts, "fixed-ports", false, "workers listen on fixed ports, to be firewalled: each slot's transport on --worker-host at the slot's port, its monitor at the port + --monitor-port-offset (default: free ports)")
	fs.IntVar(&s.monitorOffset, "monitor-port-offset", supervisor.DefaultMonitorPortOffset, "with --fixed-ports: a slot's monitor port is its port plus this")
	fs.StringVar(&s.workerUser, "worker-user", "", "user[:group] (names or numbers) the workers run as, with no supplementary groups; "+
		"the supervisor must be root (default: the supervisor's own user)")
	fs.Var(&s.workerMemory, "worker-memory", "memory limit of each worker: bytes, or with a unit (512MiB, 2GiB); "+
		"cgroup v2 memory.max, else RLIMIT_AS (0: none)")
	fs.Uint64Var(&s.workerOpenFiles, "worker-open-files", 0, "descriptor limit of each worker, RLIMIT_NOFILE (0: the supervisor's)")
	fs.Int64Var(&s.workerPids, "worker-pids", 0, "process and thread limit of each worker, cgroup v2 pids.max (0: none)")
	fs.StringVar(&s.workerCgroupParent, "worker-cgroup-parent", "", "cgroup v2 directory the workers' cgroups are made in "+
		"(default: /sys/fs/cgroup when a cgroup limit is set and it is usable, rlimits otherwise)")
	s.capacity.register(fs)
}

// isolation is the workers' supervisor.Isolation of the flags.
func (s *supervisorFlags) isolation() (supervisor.Isolation, error) {
	iso := supervisor.Isolation{MemoryBytes: int64(s.workerMemory), OpenFiles: s.workerOpenFiles, Pids: s.workerPids,
		CgroupParent: s.workerCgroupParent}
	if s.workerUser != "" {
		r, err := supervisor.LookupRunAs(s.workerUser)
		if err != nil {
			return iso, fmt.Errorf("--worker-user: %w", err)
		}
		iso.RunAs = r
	}
	return iso, iso.Validate()
}

func (s *supervisorFlags) config(e *etcdFlags) (supervisor.Config, error) {
	if s.host == "" {
		return supervisor.Config{}, usageError("--worker-host is empty")
	}
	if s.slots < 1 || s.firstPort < 1 || s.firstPort+s.slots > 65536 {
		return supervisor.Config{}, usageError("--slots %d from --first-port %d: want at least one slot within 1-65535", s.slots, s.firstPort)
	}
	ports := make([]int, s.slots)
	for i := range ports {
		ports[i] = s.firstPort + i
	}
	// Workers hold leases of the supervisor's TTL: a node's death is
	// noticed when both have expired.
	bundle, err := s.certs.load(pki.Supervisor)
	if err != nil {
		return supervisor.Config{}, usageError("%v", err)
	}
	token, err := readSecretFile("--token-file", s.tokenFile)
	if err != nil {
		return supervisor.Config{}, usageError("%v", err)
	}
	iso, err := s.isolation()
	if err != nil {
		return supervisor.Config{}, usageError("%v", err)
	}
	capacity, err := s.capacity.resources()
	if err != nil {
		return supervisor.Config{}, usageError("%v", err)
	}
	if bundle == nil && (!e.loopback() || !httpguard.LoopbackHost(s.host)) {
		return supervisor.Config{}, usageError("etcd at %s, workers on %s: %v", e.endpoints, s.host, errNoCerts)
	}
	cfg := supervisor.Config{Prefix: e.prefix, ID: s.id, Ports: ports, DataDir: s.dataDir, TTL: s.ttl, Grace: s.grace,
		MinUptime: s.minUptime, WorkerEnv: e.env(), WorkerArgs: []string{"--ttl", s.ttl.String(),
			"--listen", net.JoinHostPort(s.host, "0"), "--http", net.JoinHostPort(s.host, "0")}, Token: token,
		Bundle: bundle, WorkerHost: s.host, FixedPorts: s.fixedPorts, MonitorPortOffset: s.monitorOffset, Isolation: iso,
		Capacity: capacity}
	if s.listen != "" {
		ln, err := net.Listen("tcp", s.listen)
		if err != nil {
			return supervisor.Config{}, fmt.Errorf("--listen: %w", err)
		}
		cfg.Listener = ln
	}
	return cfg, nil
}

func runSupervisor(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("supervisor", flag.ContinueOnError)
	var e etcdFlags
	var lf logFlags
	var sf supervisorFlags
	e.register(fs)
	lf.register(fs, "info")
	sf.register(fs, "squall-data/supervisor")
	if _, err := parse(p, fs, "supervisor", args, 0); err != nil {
		return err
	}
	log, logs, err := lf.logger(p.Stderr)
	if err != nil {
		return usageError("%v", err)
	}
	defer logs.Close()
	cfg, err := sf.config(&e)
	if err != nil {
		return err
	}
	cfg.WorkerEnv = append(cfg.WorkerEnv, "SQUALL_LOG_LEVEL="+lf.level, "SQUALL_LOG_FORMAT="+lf.format)
	cli, err := e.client()
	if err != nil {
		return err
	}
	defer cli.Close()
	cfg.Client, cfg.Logger = cli, log
	s, err := supervisor.New(cfg)
	if err != nil {
		return usageError("%v", err)
	}
	if err := s.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func runWorker(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var e etcdFlags
	var lf logFlags
	e.register(fs)
	lf.register(fs, "info")
	name := fs.String("topology", "", "topology to run")
	sup := fs.String("supervisor", "", "ID of the supervisor that started this worker")
	port := fs.Int("port", 0, "slot (port) of this worker")
	dataDir := fs.String("data-dir", ".", "this worker's directory")
	dev := fs.Bool("dev", false, "dev mode: started by the dev command (Env.Dev)")
	ttl := fs.Duration("ttl", 10*time.Second, "lease TTL of the worker's registration")
	listen := fs.String("listen", "127.0.0.1:0", "address the worker listens on for the other workers of its topology")
	httpAddr := fs.String("http", "", "address of the worker's monitor (read-only web UI, REST API, /metrics); empty: none; off loopback $SQUALL_MONITOR_TOKEN or --certs is required")
	var cf certFlags
	cf.register(fs, "worker (issued by its supervisor)")
	if _, err := parse(p, fs, "worker", args, 0); err != nil {
		return err
	}
	bundle, err := cf.load(pki.Worker)
	if err != nil {
		return usageError("%v", err)
	}
	log, logs, err := lf.logger(p.Stderr)
	if err != nil {
		return usageError("%v", err)
	}
	defer logs.Close()
	if *sup == "" || *port <= 0 {
		return usageError("--supervisor and --port are required (a worker is started by a supervisor)")
	}
	t, err := p.Registry.Lookup(*name)
	if err != nil {
		return usageError("--topology: %v", err)
	}
	cli, err := e.client()
	if err != nil {
		return err
	}
	defer cli.Close()
	code, err := worker.Run(ctx, worker.Config{Client: cli, Prefix: e.prefix, Topology: t,
		Slot: meta.Slot{Supervisor: *sup, Port: *port}, DataDir: *dataDir, Dev: *dev, TTL: *ttl,
		Listen: *listen, HTTP: *httpAddr, MonitorToken: p.Getenv("SQUALL_MONITOR_TOKEN"), LogFile: lf.file.Path, Bundle: bundle,
		Logger: log.With("pid", os.Getpid())})
	// For a supervisor that adopted this worker (it is not its child, so
	// it cannot read the exit status): why the worker ended.
	meta.WriteExitCode(*dataDir, code)
	if code != ExitOK || err != nil {
		return exitError{code: code, err: err}
	}
	return nil
}

func runDev(ctx context.Context, p *Program, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	var lf logFlags
	lf.register(fs, "warn")
	dataDir := fs.String("data-dir", "squall-dev", "directory of everything dev keeps: etcd's data, code, stores, worker logs")
	etcdListen := fs.String("etcd-listen", "127.0.0.1:2379", "client address of the embedded etcd")
	listen := fs.String("listen", "127.0.0.1:6627", "address of the nimbus's HTTP server")
	slots := fs.Int("slots", 4, "worker slots")
	firstPort := fs.Int("first-port", 6700, "port of the first slot")
	if _, err := parse(p, fs, "dev", args, 0); err != nil {
		return err
	}
	log, logs, err := lf.logger(p.Stderr)
	if err != nil {
		return usageError("%v", err)
	}
	defer logs.Close()
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		return err
	}
	exe, err := p.Executable()
	if err != nil {
		return fmt.Errorf("finding this program's binary: %w", err)
	}

	certs, err := makeDevCerts(filepath.Join(dir, "pki"))
	if err != nil {
		return err
	}
	etcd, err := etcdembed.Start(ctx, etcdembed.Config{Dir: filepath.Join(dir, "etcd"), ClientURL: "http://" + *etcdListen,
		PeerURL: "http://127.0.0.1:0"})
	if err != nil {
		return fmt.Errorf("starting the embedded etcd (is --etcd-listen %s free?): %w", *etcdListen, err)
	}
	defer etcd.Close()
	e := etcdFlags{endpoints: etcd.Endpoints()[0], prefix: meta.DefaultPrefix, dialTimeout: 5 * time.Second}
	cli, err := e.client()
	if err != nil {
		return err
	}
	defer cli.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	n, err := nimbus.New(nimbus.Config{Client: cli, ID: ln.Addr().String(), Listener: ln,
		CodeDir: filepath.Join(dir, "nimbus"), TTL: 2 * time.Second, Bundle: certs.nimbus, Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	sf := supervisorFlags{id: "dev", slots: *slots, firstPort: *firstPort, dataDir: filepath.Join(dir, "supervisor"),
		ttl: 2 * time.Second, grace: 10 * time.Second, minUptime: 5 * time.Second, host: "127.0.0.1", listen: "127.0.0.1:0"}
	scfg, err := sf.config(&e)
	if err != nil {
		return err
	}
	scfg.Client, scfg.Logger, scfg.StopWorkersOnExit, scfg.Bundle = cli, log, true, certs.supervisor
	scfg.WorkerArgs = append(scfg.WorkerArgs, "--dev")
	scfg.WorkerEnv = append(scfg.WorkerEnv, "SQUALL_LOG_LEVEL=info")
	s, err := supervisor.New(scfg)
	if err != nil {
		return err
	}

	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); n.Run(rctx) }()
	go func() { defer wg.Done(); s.Run(rctx) }()
	defer wg.Wait()
	defer stop()

	if err := submitAll(rctx, p, n, exe, log); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	fmt.Fprintf(p.Stdout, "squall dev: etcd at %s, nimbus at https://%s, data in %s; topologies: %v\n"+
		"  try: %s list --etcd-endpoints %s --certs %s\n  worker logs: %s/supervisor/workers/<port>/%s\n"+
		"  cluster view: https://%s/ (dev's own CA: %s/pki/ca/ca.crt)\n  interrupt (Ctrl-C) to stop\n",
		e.endpoints, ln.Addr(), dir, p.Registry.Names(), progName(), e.endpoints, certs.adminDir, dir, supervisor.WorkerLogFile,
		ln.Addr(), dir)
	<-ctx.Done()
	return nil
}

// submitAll waits for the dev nimbus to lead and submits every topology.
func submitAll(ctx context.Context, p *Program, n *nimbus.Nimbus, exe string, log *slog.Logger) error {
	for n.Candidate().Current() == nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.Candidate().Changed():
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, name := range p.Registry.Names() {
		f, err := os.Open(exe)
		if err != nil {
			return err
		}
		s, err := n.SubmitTopology(ctx, name, 1, Fingerprint(name), f)
		f.Close()
		if err != nil {
			return fmt.Errorf("submitting %s: %w", name, err)
		}
		log.Info("dev: submitted", "topology", name, "artifact", s.Artifact)
	}
	return nil
}
