package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/squallstream/squall/internal/nemesis"
)

// harness is one run: the binaries, the network, the certificates and
// the services, shared by its schedules.
type harness struct {
	cfg     config
	out     io.Writer // progress lines
	cluster nemesis.Cluster
	net     *network
	dir     string // the run's directory
	bin     string // the room-presence program
	etcdBin string // cmd/squall-etcd
	certs   string // ca/, and one directory per identity
	svcDirs map[string]string
}

func (h *harness) say(format string, args ...any) {
	fmt.Fprintf(h.out, "partitions: "+format+"\n", args...)
}

// prepare builds the programs, creates the network, issues the
// certificates and starts Kafka and Cassandra. Its clean-up is teardown,
// which is safe to call after a partial prepare.
func (h *harness) prepare(ctx context.Context) error {
	t0 := time.Now()
	if err := h.build(ctx); err != nil {
		return err
	}
	h.say("built the programs in %v", time.Since(t0).Round(100*time.Millisecond))
	t0 = time.Now()
	if err := h.net.setup(ctx); err != nil {
		return fmt.Errorf("network: %w", err)
	}
	link := "netem"
	if !h.net.netem {
		link = "htb throttling (this kernel has no sch_netem)"
	}
	h.say("network namespaces %s-* on %s.0/24 ready in %v; slow links by %s", h.net.prefix, subnet,
		time.Since(t0).Round(100*time.Millisecond), link)
	if err := h.issueCerts(ctx); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	t0 = time.Now()
	if err := h.startServices(ctx); err != nil {
		return fmt.Errorf("services: %w", err)
	}
	h.say("Kafka and Cassandra up on %s in %v", h.net.ips[h.cluster.Services], time.Since(t0).Round(100*time.Millisecond))
	return nil
}

// build compiles the room-presence program (with the mutant's tag, if
// any) and the etcd member program.
func (h *harness) build(ctx context.Context) error {
	bin := filepath.Join(h.dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	h.bin, h.etcdBin = filepath.Join(bin, "roompresence"), filepath.Join(bin, "squall-etcd")
	args := []string{"build", "-o", h.bin}
	if tag := mutantTags[h.cfg.mutant]; tag != "" {
		args = append(args, "-tags", tag)
	}
	builds := [][]string{append(args, "./examples/roompresence"), {"build", "-o", h.etcdBin, "./cmd/squall-etcd"}}
	for _, b := range builds {
		cmd := exec.CommandContext(ctx, "go", b...)
		cmd.Dir = h.cfg.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w\n%s", strings.Join(b, " "), err, out)
		}
	}
	return nil
}

// mutantTags are the build tags of the mutants the harness must catch
// (docs/partitions.md).
var mutantTags = map[string]string{
	"":          "",
	"forgetful": "roompresence_mutant",
	"unfenced":  "roompresence_unfenced",
}

// issueCerts creates the cluster's CA and certificates with the
// program's own ca command, as an operator would: a nimbus's and a
// supervisor's certificate per host (named after the host, valid for its
// address), an etcd member's per etcd host, an etcd client's per daemon
// host, and the admin's for the harness's client commands.
func (h *harness) issueCerts(ctx context.Context) error {
	h.certs = filepath.Join(h.dir, "certs")
	ca := filepath.Join(h.certs, "ca")
	if err := h.ca(ctx, "init", "--dir", ca, "--name", "squall-partitions"); err != nil {
		return err
	}
	issue := func(role, name, out string, hosts ...string) error {
		return h.ca(ctx, "issue", "--ca", ca, "--role", role, "--name", name, "--out", filepath.Join(h.certs, out),
			"--hosts", strings.Join(hosts, ","))
	}
	c := h.cluster
	for _, e := range c.Etcd {
		if err := issue("client", "etcd-"+string(e), "etcd-"+string(e), h.net.ips[e]); err != nil {
			return err
		}
	}
	for _, n := range c.Nimbus {
		if err := issue("nimbus", string(n), string(n), h.net.ips[n]); err != nil {
			return err
		}
	}
	for _, w := range c.Workers {
		if err := issue("supervisor", string(w), string(w), h.net.ips[w]); err != nil {
			return err
		}
	}
	for _, d := range append(append([]nemesis.Host{obsHost}, c.Nimbus...), c.Workers...) {
		if err := issue("client", "etcd-client-"+string(d), "etcd-client-"+string(d)); err != nil {
			return err
		}
	}
	return issue("admin", "partitions", "admin")
}

func (h *harness) ca(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, h.bin, append([]string{"cluster", "ca"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ca %s: %w: %s", args[0], err, out)
	}
	return nil
}

// etcdEnv is the environment that points a daemon of host h (or the
// observer) at the etcd cluster, with its client certificate.
func (h *harness) etcdEnv(host nemesis.Host) []string {
	cert := filepath.Join(h.certs, "etcd-client-"+string(host))
	return []string{"SQUALL_ETCD_ENDPOINTS=" + strings.Join(h.etcdEndpoints(), ","),
		"SQUALL_ETCD_CA=" + filepath.Join(h.certs, "ca", "ca.crt"),
		"SQUALL_ETCD_CERT=" + filepath.Join(cert, "tls.crt"), "SQUALL_ETCD_KEY=" + filepath.Join(cert, "tls.key")}
}

func (h *harness) etcdEndpoints() []string {
	var eps []string
	for _, e := range h.cluster.Etcd {
		eps = append(eps, "https://"+h.net.ips[e]+":2379")
	}
	return eps
}

// observerTLS is the TLS configuration of the observer's etcd client.
func (h *harness) observerTLS() (*tls.Config, error) {
	pem, err := os.ReadFile(filepath.Join(h.certs, "ca", "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no CA certificate")
	}
	dir := filepath.Join(h.certs, "etcd-client-"+string(obsHost))
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// services: Kafka and Cassandra, each started by scripts/services.sh in
// the services host's namespace with SQUALL_SERVICES_HOST set to its
// address, each in a services directory of its own (so they start side
// by side). Their jars are hard links to those of the repository's
// services directory when it has them (Maven resolves them otherwise,
// from its local repository).
var services = []string{"kafka", "cassandra"}

func (h *harness) startServices(ctx context.Context) error {
	h.svcDirs = map[string]string{}
	var wg sync.WaitGroup
	errs := make([]error, len(services))
	for i, s := range services {
		dir := filepath.Join(h.dir, "services-"+s)
		h.svcDirs[s] = dir
		if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
			return err
		}
		if src := filepath.Join(h.cfg.repo, ".services", "lib", s); dirExists(filepath.Join(src, ".pom.sha256")) {
			if run(ctx, "cp", "-al", src, filepath.Join(dir, "lib", s)) != nil {
				run(ctx, "cp", "-r", src, filepath.Join(dir, "lib", s))
			}
		}
		wg.Add(1)
		go func() { // owner: startServices, which waits
			defer wg.Done()
			errs[i] = h.servicesSh(ctx, s, "up", s)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopServices stops Kafka and Cassandra (and removes nothing: the
// clean-up of the run directory does).
func (h *harness) stopServices(ctx context.Context) {
	for s := range h.svcDirs {
		h.servicesSh(ctx, s, "down")
	}
}

func (h *harness) servicesSh(ctx context.Context, service string, args ...string) error {
	dir := h.svcDirs[service]
	log, err := os.OpenFile(filepath.Join(h.dir, "services-"+service+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.net.ns(h.cluster.Services),
		filepath.Join(h.cfg.repo, "scripts", "services.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "SQUALL_SERVICES_DIR="+dir, "SQUALL_SERVICES_HOST="+h.net.ips[h.cluster.Services])
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("scripts/services.sh %s: %w (log: %s)", strings.Join(args, " "), err, log.Name())
	}
	return nil
}

func dirExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// kafkaAddr and cassandraAddr are the services' client addresses.
func (h *harness) kafkaAddr() string     { return h.net.ips[h.cluster.Services] + ":19092" }
func (h *harness) cassandraAddr() string { return h.net.ips[h.cluster.Services] + ":19042" }

// teardown stops the services and removes the network (with every
// process still in it).
func (h *harness) teardown() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if h.svcDirs != nil {
		h.stopServices(ctx)
	}
	h.net.teardown(ctx)
}
