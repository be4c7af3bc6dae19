package topology

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
)

// executor is the part every executor kind shares: its place in the plan,
// its outbox, its edge-id generator and its routes.
type executor struct {
	w       *worker
	idx     int
	plan    *execPlan
	out     outbox
	rng     *mrand.Rand
	acking  bool
	routes  map[string]*route
	deflt   *route
	scratch []TaskID
	current TaskID   // the task whose code is running, for crash reports
	counts  []counts // by task id - plan.tasks[0]
}

// runner is one kind of executor.
type runner interface {
	base() *executor
	run()
	cleanup()
}

// route is one executor's instance of a stream's routing.
type route struct {
	*routePlan
	choosers []chooser
}

func newExecutor(w *worker, idx int) runner {
	p := &w.plan.execs[idx]
	e := &executor{w: w, idx: idx, plan: p, out: newOutbox(w), acking: w.cfg.acking(),
		rng: newRand(w.cfg.Seed, w.incarnation, idx), current: p.tasks[0],
		counts: make([]counts, len(p.tasks))}
	if p.comp != nil {
		e.routes = make(map[string]*route)
		for name, rp := range w.plan.routes[p.comp] {
			r := &route{routePlan: rp}
			for _, s := range rp.subs {
				targets := s.targets
				if s.grouping.kind == groupLocalOrShuffle {
					targets = w.plan.localTargets(targets)
				}
				r.choosers = append(r.choosers, newChooser(s.grouping, targets, s.fieldIndex, e.rng))
			}
			e.routes[name] = r
		}
		e.deflt = e.routes[DefaultStream]
	}
	switch p.kind {
	case spoutExec:
		return newSpoutExecutor(e)
	case boltExec:
		return newBoltExecutor(e)
	default:
		return newAckerExecutor(e)
	}
}

func (e *executor) base() *executor { return e }

// newRand returns a fast PRNG for edge and root ids and shuffle choices:
// seeded from seed, the worker's incarnation and the executor's index, or
// from crypto/rand when seed is zero.
func newRand(seed uint64, incarnation, idx int) *mrand.Rand {
	if seed != 0 {
		return mrand.New(mrand.NewPCG(seed, uint64(incarnation)<<32|uint64(idx)))
	}
	return randomRand()
}

// randomRand returns a PRNG seeded from crypto/rand.
func randomRand() *mrand.Rand {
	var seed [16]byte
	if _, err := rand.Read(seed[:]); err != nil {
		panic(fmt.Sprintf("topology: seeding edge ids: %v", err))
	}
	return mrand.New(mrand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:])))
}

// edgeID returns a random non-zero edge id. Zero is excluded because an
// edge with id 0 would not change its tree's XOR, so the tree could
// complete before that tuple is acked.
func (e *executor) edgeID() uint64 {
	for {
		if id := e.rng.Uint64(); id != 0 {
			return id
		}
	}
}

// lookupRoute returns the route of stream, checking the emit against its
// declaration. A mismatch is a programming error and stops the worker.
func (e *executor) lookupRoute(stream string, v Values, direct bool) *route {
	r := e.deflt
	if stream != DefaultStream || r == nil {
		r = e.routes[stream]
	}
	if r == nil {
		panic(fmt.Sprintf("topology: %s emitted on undeclared stream %q (declared: %v)", e.plan.comp.id, stream, e.plan.comp.streamNames()))
	}
	if len(v) != len(r.schema.fields) {
		panic(fmt.Sprintf("topology: %s emitted %d values on stream %v, which has %d fields", e.plan.comp.id, len(v), r.schema, len(r.schema.fields)))
	}
	if direct != r.schema.direct {
		if direct {
			panic(fmt.Sprintf("topology: %s used EmitDirect on stream %v, which is not a direct stream", e.plan.comp.id, r.schema))
		}
		panic(fmt.Sprintf("topology: %s used Emit on direct stream %v; use EmitDirect", e.plan.comp.id, r.schema))
	}
	return r
}

// targets returns the tasks that receive one emit. The slice is reused by
// the next call.
func (e *executor) targets(r *route, src TaskID, v Values, direct TaskID) []TaskID {
	dst := e.scratch[:0]
	if r.directTargets != nil {
		if direct < 0 || int(direct) >= len(r.directTargets) || !r.directTargets[direct] {
			panic(fmt.Sprintf("topology: %s emitted directly to task %d, which does not subscribe to %v with the direct grouping", e.plan.comp.id, direct, r.schema))
		}
		dst = append(dst, direct)
	} else {
		for _, c := range r.choosers {
			dst = c.choose(src, v, dst)
		}
	}
	e.scratch = dst
	return dst
}

// taskCounts returns the unpublished counters of one of the executor's
// tasks.
func (e *executor) taskCounts(task TaskID) *counts { return &e.counts[task-e.plan.tasks[0]] }

// flush sends buffered output and publishes counters.
func (e *executor) flush() {
	e.out.flush()
	e.w.metrics.publish(e.plan.name(), e.plan.tasks[0], e.counts)
}

// flushQuietly publishes counters without sending output: the worker is
// stopping, so buffered tuples are dropped with it and their trees fail.
func (e *executor) flushQuietly() {
	e.w.metrics.publish(e.plan.name(), e.plan.tasks[0], e.counts)
}
