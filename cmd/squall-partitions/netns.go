package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/squallstream/squall/internal/nemesis"
)

// subnet is the private range of the harness's namespaces. The addresses
// exist only inside them: the root namespace gets no address and no
// route, and the namespaces have no default route, so no packet leaves
// the machine.
const subnet = "10.77.0"

// obsHost is the namespace of the harness's own clients (the observer):
// never partitioned, so it sees the cluster while the faults hold.
const obsHost nemesis.Host = "obs"

// network is the run's namespaces: a bridge in a namespace of its own,
// one namespace per host and one for the observer, each joined to the
// bridge by a veth pair (eth0 inside the host).
type network struct {
	prefix string // namespace names: <prefix>-<host>, <prefix>-br
	ips    map[nemesis.Host]string
	hosts  []nemesis.Host // the cluster's hosts, without obs
	log    *slog.Logger
	netem  bool // the kernel has sch_netem
}

// hostIPs numbers the hosts: obs .2, etcd .11…, nimbus .21…, worker
// hosts .31…, services .40.
func hostIPs(c nemesis.Cluster) map[nemesis.Host]string {
	ips := map[nemesis.Host]string{obsHost: subnet + ".2", c.Services: subnet + ".40"}
	for base, hs := range map[int][]nemesis.Host{11: c.Etcd, 21: c.Nimbus, 31: c.Workers} {
		for i, h := range hs {
			ips[h] = fmt.Sprintf("%s.%d", subnet, base+i)
		}
	}
	return ips
}

// nsPrefix is the namespace prefix of the run of process pid.
func nsPrefix(pid int) string { return "sqp" + strconv.Itoa(pid) }

// ns returns the namespace of host h.
func (n *network) ns(h nemesis.Host) string { return n.prefix + "-" + string(h) }

// hostOf returns the host whose address is ip ("" if none).
func (n *network) hostOf(ip string) nemesis.Host {
	for h, a := range n.ips {
		if a == ip {
			return h
		}
	}
	return ""
}

// run runs a command to completion and returns its error with its output.
func run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// setup creates the namespaces, the bridge and the veth pairs.
func (n *network) setup(ctx context.Context) error {
	br := n.prefix + "-br"
	if err := run(ctx, "ip", "netns", "add", br); err != nil {
		return err
	}
	steps := [][]string{
		{"ip", "-n", br, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", br, "link", "set", "br0", "up"},
		{"ip", "-n", br, "link", "set", "lo", "up"},
	}
	for _, h := range append([]nemesis.Host{obsHost}, n.hosts...) {
		ns, veth := n.ns(h), "v-"+string(h)
		if err := run(ctx, "ip", "netns", "add", ns); err != nil {
			return err
		}
		steps = append(steps,
			[]string{"ip", "link", "add", "name", veth, "netns", br, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"ip", "-n", br, "link", "set", veth, "master", "br0", "up"},
			[]string{"ip", "-n", ns, "addr", "add", n.ips[h] + "/24", "dev", "eth0"},
			[]string{"ip", "-n", ns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", ns, "link", "set", "lo", "up"})
	}
	for _, s := range steps {
		if err := run(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	// netem where the kernel has it; a throttled link otherwise.
	n.netem = run(ctx, "tc", "-n", n.ns(obsHost), "qdisc", "add", "dev", "eth0", "root", "netem", "delay", "1ms") == nil
	if n.netem {
		run(ctx, "tc", "-n", n.ns(obsHost), "qdisc", "del", "dev", "eth0", "root")
	}
	return n.waitReachable(ctx)
}

// waitReachable waits until the observer reaches every host (the bridge
// learns its ports within a moment), when ping is installed.
func (n *network) waitReachable(ctx context.Context) error {
	if _, err := exec.LookPath("ping"); err != nil {
		return nil // the daemons' own retries will do
	}
	for _, h := range n.hosts {
		var err error
		for range 50 {
			if err = run(ctx, "ip", "netns", "exec", n.ns(obsHost), "ping", "-c", "1", "-W", "1", n.ips[h]); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("host %s (%s) unreachable from the observer: %w", h, n.ips[h], err)
		}
	}
	return nil
}

// drop installs d on its receiving host: packets from d.From are dropped
// as they arrive, so the sender sees silence (no local error), as behind
// a real partition.
func (n *network) drop(ctx context.Context, d nemesis.Drop) error {
	args := []string{"netns", "exec", n.ns(d.To), "iptables", "-w", "-A", "INPUT", "-s", n.ips[d.From]}
	if d.Percent < 100 {
		args = append(args, "-m", "statistic", "--mode", "random", "--probability", fmt.Sprintf("%.2f", float64(d.Percent)/100))
	}
	return run(ctx, "ip", append(args, "-j", "DROP")...)
}

// slow delays (netem) or throttles (htb, 1 Mbit/s: packets queue behind
// each other) what host h sends.
func (n *network) slow(ctx context.Context, h nemesis.Host, delay time.Duration) (string, error) {
	ns := n.ns(h)
	if n.netem {
		jitter := delay / 4
		return "netem delay " + delay.String(), run(ctx, "tc", "-n", ns, "qdisc", "replace", "dev", "eth0", "root", "netem",
			"delay", fmt.Sprintf("%dms", delay.Milliseconds()), fmt.Sprintf("%dms", jitter.Milliseconds()))
	}
	if err := run(ctx, "tc", "-n", ns, "qdisc", "replace", "dev", "eth0", "root", "handle", "1:", "htb", "default", "1"); err != nil {
		return "", err
	}
	return "htb 1mbit (no netem)", run(ctx, "tc", "-n", ns, "class", "replace", "dev", "eth0", "parent", "1:", "classid", "1:1",
		"htb", "rate", "1mbit", "ceil", "1mbit", "burst", "15k")
}

// heal removes every drop and every link change on every host.
func (n *network) heal(ctx context.Context) error {
	var errs []error
	for _, h := range n.hosts {
		if err := run(ctx, "ip", "netns", "exec", n.ns(h), "iptables", "-w", "-F", "INPUT"); err != nil {
			errs = append(errs, err)
		}
		run(ctx, "tc", "-n", n.ns(h), "qdisc", "del", "dev", "eth0", "root") // none is fine
	}
	return errors.Join(errs...)
}

// pids lists the processes in host h's namespace.
func (n *network) pids(ctx context.Context, h nemesis.Host) []int {
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", n.ns(h)).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil && p > 0 && p != os.Getpid() {
			pids = append(pids, p)
		}
	}
	return pids
}

// signalHost sends sig to every process in host h's namespace.
func (n *network) signalHost(ctx context.Context, h nemesis.Host, sig syscall.Signal) []int {
	pids := n.pids(ctx, h)
	for _, p := range pids {
		syscall.Kill(p, sig)
	}
	return pids
}

// teardown kills every process left in the namespaces and deletes them
// (which deletes their veths and the bridge).
func (n *network) teardown(ctx context.Context) {
	for _, h := range append([]nemesis.Host{obsHost}, n.hosts...) {
		for _, p := range n.signalHost(ctx, h, syscall.SIGKILL) {
			n.log.Debug("killed a leftover process", "host", h, "pid", p)
		}
	}
	time.Sleep(200 * time.Millisecond)
	for _, h := range append([]nemesis.Host{obsHost}, n.hosts...) {
		run(ctx, "ip", "netns", "del", n.ns(h))
	}
	run(ctx, "ip", "netns", "del", n.prefix+"-br")
}

// removeStale deletes the namespaces of earlier runs whose process is
// gone (a run killed before its clean-up), with the processes in them.
func removeStale(ctx context.Context, log *slog.Logger) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, "sqp")
		if !ok {
			continue
		}
		num, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		if syscall.Kill(pid, 0) == nil {
			continue // that run is alive
		}
		if pids, err := exec.CommandContext(ctx, "ip", "netns", "pids", name).Output(); err == nil {
			for _, f := range strings.Fields(string(pids)) {
				if p, err := strconv.Atoi(f); err == nil {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}
		}
		run(ctx, "ip", "netns", "del", name)
		log.Info("removed the namespace of an earlier run", "netns", name)
	}
}
