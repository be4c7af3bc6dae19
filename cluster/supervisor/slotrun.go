package supervisor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/cluster/codestore"
	"github.com/squallstream/squall/cluster/meta"
)

// runSlot runs one slot's worker, restarting it, until ctx is done; then
// it stops the worker if r.stop is set.
func (s *Supervisor) runSlot(ctx, life context.Context, r *slotRun, prev <-chan struct{}, p *proc) {
	defer close(r.done)
	if prev != nil {
		<-prev // the slot's previous worker has stopped
	}
	slot := meta.Slot{Supervisor: s.cfg.ID, Port: r.port}
	log := s.log.With("port", r.port, "topology", r.work.Topology)
	hist := newSlotLife(slot, r.work, s.cfg.RestartBackoff, s.cfg.MaxRestartBackoff, s.cfg.MinUptime)
	reported := false
	for ctx.Err() == nil {
		if p == nil {
			var err error
			if p, err = s.start(ctx, r); err != nil {
				if ctx.Err() != nil {
					break
				}
				acts := hist.startFailed(err.Error(), s.clock.Now())
				log.Warn("supervisor: starting a worker failed; retrying", "err", err, "failures", hist.report.Failures, "in", waitOf(acts))
				reported = s.follow(ctx, acts) || reported
				continue
			}
		}
		select {
		case <-ctx.Done():
			continue
		case <-p.done:
		}
		if code, ok := meta.ReadExitCode(s.slotDir(r.port), p.rec.Started); p.code == -1 && ok {
			p.code = code // an adopted worker's, which is not this process's child
		}
		now := s.clock.Now()
		class, acts := hist.exited(p.rec.PID, p.code, p.rec.Started, now)
		switch class {
		case exitSuperseded:
			log.Info("supervisor: the worker was superseded by a newer one of its topology", "pid", p.rec.PID)
		case exitReassigned:
			// The topology was placed anew: start the slot's worker of the
			// new epoch after the shortest wait.
			log.Info("supervisor: the topology's workers were reassigned; starting the slot's worker again", "pid", p.rec.PID)
		default:
			log.Warn("supervisor: worker exited; restarting", "pid", p.rec.PID, "code", p.code, "uptime", now.Sub(p.rec.Started),
				"crashes", hist.report.Crashes, "failures", hist.report.Failures)
		}
		os.Remove(s.pidFile(r.port))
		p = nil
		reported = s.follow(ctx, acts) || reported
	}
	if !r.stop.Load() {
		return // the supervisor stops; the worker runs on
	}
	if p != nil {
		if terminate(p, s.clock, s.cfg.Grace) {
			log.Warn("supervisor: the worker did not stop within the grace period; killed", "pid", p.rec.PID, "grace", s.cfg.Grace)
		}
		os.Remove(s.pidFile(r.port))
	}
	if reported {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		s.forgetCrash(dctx, s.keys.Crash(r.work.Topology, slot))
	}
}

// follow executes a slot's actions (reports, back-offs) and reports
// whether it reported crashes.
func (s *Supervisor) follow(ctx context.Context, acts []action) (reported bool) {
	for _, a := range acts {
		switch a.Kind {
		case actReport:
			s.report(ctx, a.Crash)
			reported = true
		case actBackOff:
			s.sleep(ctx, a.Wait)
		}
	}
	return reported
}

// waitOf is the back-off among acts (0 if none).
func waitOf(acts []action) time.Duration {
	for _, a := range acts {
		if a.Kind == actBackOff {
			return a.Wait
		}
	}
	return 0
}

// report stores a slot's crash counts under the registration lease, and
// remembers them: a lost lease takes the key with it, and the next
// registration publishes them again (republishCrashes).
func (s *Supervisor) report(ctx context.Context, c meta.Crash) {
	key := s.keys.Crash(c.Topology, c.Slot)
	s.mu.Lock()
	if s.crashes == nil {
		s.crashes = map[string]meta.Crash{}
	}
	s.crashes[key] = c
	sess := s.session
	s.mu.Unlock()
	if sess != nil { // else published when the supervisor registers again
		s.putCrash(ctx, sess, key, c)
	}
}

// putCrash writes one crash report under sess's lease.
func (s *Supervisor) putCrash(ctx context.Context, sess *concurrency.Session, key string, c meta.Crash) {
	if _, err := s.cfg.Client.Put(ctx, key, meta.Encode(c), clientv3.WithLease(sess.Lease())); err != nil {
		s.log.Warn("supervisor: reporting crashes failed", "err", err)
	}
}

// forgetCrash deletes a slot's crash report, in etcd and in memory.
func (s *Supervisor) forgetCrash(ctx context.Context, key string) {
	s.mu.Lock()
	delete(s.crashes, key)
	s.mu.Unlock()
	s.cfg.Client.Delete(ctx, key)
}

// republishCrashes writes the remembered crash reports under sess, the
// lease of a new registration.
func (s *Supervisor) republishCrashes(ctx context.Context, sess *concurrency.Session) {
	s.mu.Lock()
	reports := maps.Clone(s.crashes)
	s.mu.Unlock()
	for key, c := range reports {
		s.putCrash(ctx, sess, key, c)
	}
}

// start fetches the artifact if needed and starts the worker.
func (s *Supervisor) start(ctx context.Context, r *slotRun) (*proc, error) {
	dg, err := codestore.ParseDigest(r.work.Artifact)
	if err != nil {
		return nil, err
	}
	path, err := s.artifact(ctx, r.work.Topology, dg)
	if err != nil {
		return nil, err
	}
	dir := s.slotDir(r.port)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	args := append([]string{"worker", "--topology", r.work.Topology, "--supervisor", s.cfg.ID,
		"--port", strconv.Itoa(r.port), "--data-dir", dir, "--log-file", filepath.Join(dir, WorkerLogFile), "--log-format", "json"},
		s.cfg.WorkerArgs...)
	if s.cfg.FixedPorts {
		// After WorkerArgs: the last --listen and --http win.
		args = append(args, "--listen", net.JoinHostPort(s.cfg.WorkerHost, strconv.Itoa(r.port)),
			"--http", net.JoinHostPort(s.cfg.WorkerHost, strconv.Itoa(r.port+cmp.Or(s.cfg.MonitorPortOffset, DefaultMonitorPortOffset))))
	}
	var certs string
	if s.cfg.Bundle != nil {
		if certs, err = s.issueWorker(r.work.Topology, r.port); err != nil {
			return nil, err
		}
		args = append(args, "--certs", certs)
	}
	env, err := s.workerEnv(ctx, r.work.Topology, certs)
	if err != nil {
		return nil, err
	}
	p, cmd, err := launchIsolated(s.isolator, r.port, path, args, env, dir, filepath.Join(dir, WorkerOutputFile))
	// An artifact just written may be "busy" for a moment: a process
	// forked meanwhile (another slot's worker) inherited its write
	// descriptor until it execs. Not a start failure: try again shortly.
	for busy := 0; errors.Is(err, syscall.ETXTBSY) && busy < 50 && ctx.Err() == nil; busy++ {
		s.sleep(ctx, 20*time.Millisecond)
		p, cmd, err = launchIsolated(s.isolator, r.port, path, args, env, dir, filepath.Join(dir, WorkerOutputFile))
	}
	if err != nil {
		return nil, fmt.Errorf("supervisor: starting %s: %w", path, err)
	}
	p.rec.Topology, p.rec.Artifact, p.rec.Port, p.rec.Started = r.work.Topology, r.work.Artifact, r.port, s.clock.Now()
	if err := writeRecord(s.pidFile(r.port), p.rec); err != nil {
		s.log.Warn("supervisor: writing the pid file failed: a restarted supervisor will not adopt this worker", "err", err)
	}
	s.starts.Add(1)
	s.log.Info("supervisor: started a worker", "port", r.port, "topology", r.work.Topology, "pid", cmd.Process.Pid)
	return p, nil
}
