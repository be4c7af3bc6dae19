package main

import (
	"context"
	"fmt"
	"slices"
	"syscall"

	"github.com/squallstream/squall/internal/nemesis"
)

// actor carries out one episode's actions on the cluster and heals them:
// the thin shell around the nemesis's schedule.
type actor struct {
	c   *cluster
	obs *observer
	tl  *timeline

	killed  []*daemon      // started again at the heal (or by a Restart)
	paused  []*daemon      // SIGCONT at the heal
	stopped []int          // worker pids and frozen hosts' processes: SIGCONT at the heal
	targets map[string]any // a fault's resolved daemon, for its Restart
}

func newActor(c *cluster, obs *observer, tl *timeline) *actor {
	return &actor{c: c, obs: obs, tl: tl, targets: map[string]any{}}
}

func faultKey(f nemesis.Fault) string { return f.At.String() + " " + f.String() }

// resolve returns the host a fault's target names, now.
func (a *actor) resolve(ctx context.Context, f nemesis.Fault) nemesis.Host {
	var h nemesis.Host
	var err error
	switch f.Target {
	case nemesis.LeaderNimbus:
		h, err = a.obs.leaderHost(ctx, a.c.h.net)
	case nemesis.Share0, nemesis.Share1:
		i := 0
		if f.Target == nemesis.Share1 {
			i = 1
		}
		if s, _ := a.obs.status(); i == 0 && s.PID != 0 {
			h = nemesis.Host(s.Slot.Supervisor)
			break
		}
		slot, _, e := a.obs.shareWorker(ctx, i)
		h, err = nemesis.Host(slot.Supervisor), e
	default:
		return nemesis.Host(f.Target)
	}
	if err != nil || h == "" {
		a.tl.printf("  %s: unresolved (%v); using %s", f.Target, err, f.Fallback)
		return f.Fallback
	}
	return h
}

// apply carries out one action.
func (a *actor) apply(ctx context.Context, act nemesis.Action) error {
	f := act.Fault
	net := a.c.h.net
	if act.Op == nemesis.Restart {
		if d, ok := a.targets[faultKey(f)].(*daemon); ok {
			a.tl.printf("%s: %s started again", act, d.name)
			return d.start()
		}
		return nil
	}
	switch {
	case f.Kind.Network():
		host := a.resolve(ctx, f)
		drops := f.Drops(a.c.h.cluster, host)
		for _, d := range drops {
			if err := net.drop(ctx, d); err != nil {
				return err
			}
		}
		a.tl.printf("%s: target %s, %d drops %v", act, host, len(drops), drops)
	case f.Kind == nemesis.Slow:
		host := a.resolve(ctx, f)
		how, err := net.slow(ctx, host, f.Delay)
		if err != nil {
			return err
		}
		a.tl.printf("%s: target %s, %s", act, host, how)
	case f.Kind == nemesis.Freeze:
		host := a.resolve(ctx, f)
		pids := net.signalHost(ctx, host, syscall.SIGSTOP)
		a.stopped = append(a.stopped, pids...)
		a.tl.printf("%s: host %s frozen (SIGSTOP to pids %v)", act, host, pids)
	case f.Role == nemesis.Worker:
		i := 0
		if f.Target == nemesis.Share1 {
			i = 1
		}
		slot, w, err := a.obs.shareWorker(ctx, i)
		if err != nil || w.PID == 0 {
			a.tl.printf("%s: no worker of share %d registered (%v): nothing done", act, i, err)
			return nil
		}
		// Only a process of that host's namespace: a registration may
		// outlive its worker by a lease, and its pid be reused.
		if !slices.Contains(net.pids(ctx, nemesis.Host(slot.Supervisor)), w.PID) {
			a.tl.printf("%s: worker pid %d of slot %s is not running on its host: nothing done", act, w.PID, slot)
			return nil
		}
		sig := syscall.SIGKILL
		if f.Kind == nemesis.Pause {
			sig = syscall.SIGSTOP
			a.stopped = append(a.stopped, w.PID)
		}
		syscall.Kill(w.PID, sig)
		a.tl.printf("%s: worker pid %d in slot %s: %v", act, w.PID, slot, sig)
	default: // Kill, Pause, EtcdDown of a daemon
		host := a.resolve(ctx, f)
		d := a.c.daemons[host]
		if d == nil || d.role != f.Role {
			return fmt.Errorf("%s: no %s daemon on host %s", act, f.Role, host)
		}
		a.targets[faultKey(f)] = d
		if f.Kind == nemesis.Pause {
			if err := d.pause(); err != nil {
				a.tl.printf("%s: %v", act, err)
				return nil
			}
			a.paused = append(a.paused, d)
			a.tl.printf("%s: %s (pid %d) stopped", act, d.name, d.pid())
			return nil
		}
		pid := d.pid()
		d.kill()
		a.killed = append(a.killed, d)
		a.tl.printf("%s: %s (pid %d) killed", act, d.name, pid)
	}
	return nil
}

// heal ends every fault: the network first, then stopped processes go
// on, then killed daemons start again.
func (a *actor) heal(ctx context.Context) error {
	err := a.c.h.net.heal(ctx)
	for _, p := range a.stopped {
		syscall.Kill(p, syscall.SIGCONT)
	}
	for _, d := range a.paused {
		d.resume()
	}
	var started []string
	for _, d := range a.killed {
		if d.pid() == 0 {
			if e := d.start(); e != nil && err == nil {
				err = e
			}
			started = append(started, d.name)
		}
	}
	a.tl.printf("heal: rules and links cleared, %d processes continued, %d daemons resumed, started again: %v",
		len(a.stopped), len(a.paused), started)
	a.killed, a.paused, a.stopped = nil, nil, nil
	return err
}
