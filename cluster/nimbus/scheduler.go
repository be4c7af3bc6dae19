package nimbus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/schedule"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
)

// The leader's scheduling loop. While this nimbus leads it watches the
// specs, the live supervisors, the live workers and the crash reports;
// after a change has settled (Config.ScheduleDelay), and every
// Config.ResyncInterval, it makes one pass:
//
//  1. Read the whole cluster state in one etcd read.
//  2. A slot whose worker failed to start Config.FailureLimit times in a
//     row (for the assigned artifact) is avoided for Config.AvoidFor: it
//     is taken out of the slots offered to the scheduler, so its topology
//     moves to a free slot.
//  3. The slots offered are the ports of the live supervisors, plus the
//     slots of live workers whose supervisor is gone: a worker outlives
//     its supervisor, and keeps its slot while its own lease lives. A
//     slot is lost only when both leases have expired (node death).
//  4. schedule.Schedule computes the next assignment from the specs and
//     the current assignments (a topology rebalanced since its assignment
//     was made starts from nothing).
//  5. Changed assignments are written, and assignments of killed
//     topologies deleted, through Leadership.Write: a deposed leader
//     writes nothing.

// executorsOf returns the schedulable units of a topology: one per
// requested worker, so that the scheduler spreads them over that many
// slots. The nimbus does not build topologies (their code runs in
// workers only); the workers of an assignment place the executors of the
// generated topology on themselves by a fixed rule (trident.Share), each
// knowing its share from its slot's position in the assignment.
func executorsOf(spec meta.Spec) []schedule.Executor {
	out := make([]schedule.Executor, max(spec.Workers, 1))
	for i := range out {
		out[i] = schedule.Executor{Component: "share", First: i, Last: i}
	}
	return out
}

// workerDemand is what each worker of the topology is counted at: its
// largest share's demand (which share a slot runs follows from the order
// of the slots the scheduler picks, so every worker is counted at the
// largest). Zero if the spec declares no demand.
func workerDemand(spec meta.Spec) schedule.Resources {
	var w schedule.Resources
	for _, r := range spec.Demand.Shares(max(spec.Workers, 1)) {
		w.CPU, w.MemoryMB = max(w.CPU, r.CPU), max(w.MemoryMB, r.MemoryMB)
	}
	return w
}

type scheduler struct {
	n     *Nimbus
	log   *slog.Logger
	clock clock.Clock

	mu    sync.Mutex
	avoid map[meta.Slot]time.Time // slot → avoided until
}

func newScheduler(n *Nimbus) *scheduler {
	return &scheduler{n: n, log: n.cfg.Logger.With("nimbus", n.cfg.ID), clock: n.cfg.Clock, avoid: map[meta.Slot]time.Time{}}
}

// run schedules during every term of leadership until ctx is done.
func (s *scheduler) run(ctx context.Context) {
	for ctx.Err() == nil {
		changed := s.n.cand.Changed()
		if l := s.n.cand.Current(); l != nil {
			s.lead(ctx, l)
			continue
		}
		select {
		case <-changed:
		case <-ctx.Done():
		}
	}
}

// lead schedules until the term ends or ctx is done.
func (s *scheduler) lead(ctx context.Context, l *leader.Leadership) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	go func() {
		select {
		case <-l.Done():
			cancel()
		case <-lctx.Done():
		}
	}()
	events := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	k := s.n.keys
	for _, p := range []string{k.Specs(), k.Supervisors(), k.Workers(), k.Crashes(), k.Assignments()} {
		wg.Add(1)
		go func() { defer wg.Done(); s.watch(lctx, p, events) }()
	}
	s.mu.Lock()
	s.avoid = map[meta.Slot]time.Time{} // a new term judges the slots afresh
	s.mu.Unlock()

	retry := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(5*time.Second))}
	for lctx.Err() == nil {
		wait := s.n.cfg.ResyncInterval
		if err := s.pass(lctx, l); err != nil {
			if errors.Is(err, leader.ErrDeposed) || lctx.Err() != nil {
				return
			}
			wait = time.Duration(retry.Next())
			s.log.Warn("nimbus: scheduling failed; retrying", "err", err, "in", wait)
		} else {
			retry.Reset()
		}
		t := s.clock.NewTimer(wait)
		select {
		case <-lctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-events:
			t.Stop()
			s.settle(lctx, events)
		}
	}
}

// settle waits until no event came for ScheduleDelay.
func (s *scheduler) settle(ctx context.Context, events chan struct{}) {
	for {
		t := s.clock.NewTimer(s.n.cfg.ScheduleDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-events:
			t.Stop()
		case <-t.C():
			return
		}
	}
}

// watch signals events on every change under prefix until ctx is done.
func (s *scheduler) watch(ctx context.Context, prefix string, events chan<- struct{}) {
	for ctx.Err() == nil {
		for range s.n.cfg.Client.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix()) {
			select {
			case events <- struct{}{}:
			default:
			}
		}
		select { // the watch broke (e.g. etcd lost its leader): signal and watch again
		case events <- struct{}{}:
		default:
		}
		t := s.clock.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C():
		}
		t.Stop()
	}
}

// state is the cluster as one pass reads it.
type state struct {
	specs       map[string]meta.Spec
	assignments map[string]meta.Assignment
	raw         map[string]string // assignment key → stored value, unsigned
	unverified  []string          // assignments whose signature is missing or bad
	supervisors map[string]meta.SupervisorInfo
	workers     []meta.WorkerInfo
	crashes     []meta.Crash
	revision    int64 // etcd's revision when read
}

func (s *scheduler) read(ctx context.Context) (*state, error) {
	k := s.n.keys
	resp, err := s.n.cfg.Client.Get(ctx, k.Prefix+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("nimbus: reading the cluster state: %w", err)
	}
	st := &state{specs: map[string]meta.Spec{}, assignments: map[string]meta.Assignment{}, raw: map[string]string{},
		supervisors: map[string]meta.SupervisorInfo{}, revision: resp.Header.Revision}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		var err error
		switch {
		case strings.HasPrefix(key, k.Specs()):
			var v meta.Spec
			if err = meta.Decode(key, kv.Value, &v); err == nil {
				st.specs[v.Topology] = v
			}
		case strings.HasPrefix(key, k.Assignments()):
			var v meta.Assignment
			if err = meta.Decode(key, kv.Value, &v); err == nil {
				name := strings.TrimPrefix(key, k.Assignments())
				if err = s.n.checkSigned(v); err == nil {
					st.assignments[name], st.raw[name] = v, meta.Encode(v.Unsigned())
				} else {
					st.unverified = append(st.unverified, name)
					s.n.refused.Add(1)
					err = fmt.Errorf("nimbus: %w; assigning the topology afresh", err)
				}
			}
		case strings.HasPrefix(key, k.Supervisors()):
			var v meta.SupervisorInfo
			if err = meta.Decode(key, kv.Value, &v); err == nil {
				st.supervisors[v.ID] = v
			}
		case strings.HasPrefix(key, k.Workers()):
			var v meta.WorkerInfo
			if err = meta.Decode(key, kv.Value, &v); err == nil {
				st.workers = append(st.workers, v)
			}
		case strings.HasPrefix(key, k.Crashes()):
			var v meta.Crash
			if err = meta.Decode(key, kv.Value, &v); err == nil {
				st.crashes = append(st.crashes, v)
			}
		}
		if err != nil {
			s.log.Warn("nimbus: skipping a bad record", "err", err)
		}
	}
	return st, nil
}

// pass schedules once.
func (s *scheduler) pass(ctx context.Context, l *leader.Leadership) error {
	st, err := s.read(ctx)
	if err != nil {
		return err
	}
	avoid := s.updateAvoid(st)
	res := schedule.Decide(buildInput(st, avoid))
	next := res.Assignment

	var ops []clientv3.Op
	names := make([]string, 0, len(st.specs))
	for name := range st.specs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		spec := st.specs[name]
		var old *meta.Assignment
		if cur, ok := st.assignments[name]; ok {
			old = &cur
		}
		a := toAssignment(spec, next[name], old, st.revision+1)
		if err := res.Refused[name]; err != nil {
			a.Unscheduled = err.Error()
		}
		if st.raw[name] == meta.Encode(a) {
			continue
		}
		if a.Unscheduled != "" {
			s.log.Warn("nimbus: not scheduling a topology: its workers do not fit the supervisors' capacity",
				"topology", name, "err", a.Unscheduled)
		}
		v, err := s.n.encodeSigned(a)
		if err != nil {
			return err
		}
		s.log.Info("nimbus: assigning", "topology", name, "workers", slotsOf(&a), "was", slotsOf(old), "status", a.Status,
			"epoch", a.Epoch)
		ops = append(ops, clientv3.OpPut(s.n.keys.Assignment(name), v))
	}
	for _, name := range st.unverified {
		if _, ok := st.specs[name]; !ok {
			s.log.Warn("nimbus: deleting an assignment no nimbus signed, of a topology not submitted", "topology", name)
			ops = append(ops, clientv3.OpDelete(s.n.keys.Assignment(name)))
		}
	}
	for name := range st.assignments {
		if _, ok := st.specs[name]; !ok {
			s.log.Info("nimbus: unassigning a killed topology", "topology", name)
			ops = append(ops, clientv3.OpDelete(s.n.keys.Assignment(name)), clientv3.OpDelete(s.n.keys.Generation(name)))
		}
	}
	for len(ops) > 0 {
		n := min(len(ops), 64) // etcd's default limit is 128 operations per transaction
		if _, err := l.Write(ctx, ops[:n]...); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// updateAvoid records the slots that keep failing and returns those still
// avoided.
func (s *scheduler) updateAvoid(st *state) map[meta.Slot]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for _, c := range st.crashes {
		spec, ok := st.specs[c.Topology]
		a := st.assignments[c.Topology]
		if !ok || c.Failures < s.n.cfg.FailureLimit || c.Artifact != spec.Artifact || !a.Has(c.Slot) {
			continue
		}
		if until, ok := s.avoid[c.Slot]; !ok || !now.Before(until) {
			s.log.Warn("nimbus: a worker keeps failing to start; moving its topology off the slot",
				"topology", c.Topology, "slot", c.Slot, "failures", c.Failures, "last", c.Last, "avoid_for", s.n.cfg.AvoidFor)
			s.avoid[c.Slot] = now.Add(s.n.cfg.AvoidFor)
		}
	}
	out := map[meta.Slot]bool{}
	for slot, until := range s.avoid {
		if now.Before(until) {
			out[slot] = true
		} else {
			delete(s.avoid, slot)
		}
	}
	return out
}

// buildInput turns the cluster state into the scheduler's input.
func buildInput(st *state, avoid map[meta.Slot]bool) schedule.Input {
	ports := map[string][]int{}
	for id, sv := range st.supervisors {
		ports[id] = append([]int(nil), sv.Ports...)
	}
	for _, w := range st.workers { // workers outliving their supervisor keep their slots
		if _, live := st.supervisors[w.Slot.Supervisor]; !live && !slices.Contains(ports[w.Slot.Supervisor], w.Slot.Port) {
			ports[w.Slot.Supervisor] = append(ports[w.Slot.Supervisor], w.Slot.Port)
		}
	}
	var in schedule.Input
	for id, ps := range ports {
		sv := schedule.Supervisor{ID: id}
		if info, live := st.supervisors[id]; live {
			sv.Capacity = schedule.Resources{CPU: info.Capacity.CPU, MemoryMB: info.Capacity.MemoryMB}
		}
		for _, p := range ps {
			if !avoid[meta.Slot{Supervisor: id, Port: p}] {
				sv.Ports = append(sv.Ports, p)
			}
		}
		slices.Sort(sv.Ports)
		in.Supervisors = append(in.Supervisors, sv)
	}
	in.Current = schedule.Assignment{}
	for name, spec := range st.specs {
		in.Topologies = append(in.Topologies, schedule.Topology{ID: name, Executors: executorsOf(spec), Workers: max(spec.Workers, 1),
			Worker: workerDemand(spec)})
		a, ok := st.assignments[name]
		if !ok || a.Rebalance != spec.Rebalance {
			continue // new, or rebalanced: computed afresh
		}
		p := schedule.Placement{}
		for _, e := range executorsOf(spec) {
			for _, w := range a.Workers {
				if slices.Contains(w.Executors, e.String()) {
					p[e] = schedule.Slot{Supervisor: w.Supervisor, Port: w.Port}
				}
			}
		}
		in.Current[name] = p
	}
	return in
}

// toAssignment turns a topology's placement into its assignment, in the
// epoch of old (the current assignment, nil for none) if the slots and
// the artifact are the same, else in a new epoch: next, which must exceed
// every epoch written before (a revision of etcd after the last write),
// so that epochs grow across kills and submissions too.
func toAssignment(spec meta.Spec, p schedule.Placement, old *meta.Assignment, next int64) meta.Assignment {
	a := meta.Assignment{Topology: spec.Topology, Artifact: spec.Artifact, Status: spec.Status, Rebalance: spec.Rebalance}
	bySlot := map[meta.Slot][]string{}
	for e, s := range p {
		slot := meta.Slot{Supervisor: s.Supervisor, Port: s.Port}
		bySlot[slot] = append(bySlot[slot], e.String())
	}
	for slot, es := range bySlot {
		slices.Sort(es)
		a.Workers = append(a.Workers, meta.Worker{Slot: slot, Executors: es})
	}
	slices.SortFunc(a.Workers, func(x, y meta.Worker) int {
		if c := strings.Compare(x.Supervisor, y.Supervisor); c != 0 {
			return c
		}
		return x.Port - y.Port
	})
	a.Epoch = next
	if old != nil && old.Artifact == a.Artifact && slices.Equal(slotsOf(old), slotsOf(&a)) {
		a.Epoch = old.Epoch
	}
	return a
}

func slotsOf(a *meta.Assignment) []string {
	if a == nil {
		return nil
	}
	var out []string
	for _, w := range a.Workers {
		out = append(out, w.Slot.String())
	}
	return out
}
