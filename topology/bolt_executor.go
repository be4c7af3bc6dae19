package topology

import (
	"fmt"
	"time"

	"github.com/squallstream/squall/internal/clock"
)

type boltTask struct {
	id   TaskID
	bolt Bolt
	out  *OutputCollector
	cnt  *counts
}

type boltExecutor struct {
	*executor
	tasks    []*boltTask
	in       chan []Tuple
	prepared int
	borrows  bool              // every task is a Borrower: received batches are recycled
	clock    clock.Clock       // Config.Clock
	stats    *componentMetrics // for the execute latency and busy time
}

func newBoltExecutor(e *executor) *boltExecutor {
	return &boltExecutor{executor: e, in: e.w.boltIn[e.idx], clock: e.w.cfg.Clock,
		stats: e.w.metrics.component(e.plan.name())}
}

func (b *boltExecutor) run() {
	c := b.plan.comp
	for i, id := range b.plan.tasks {
		b.current = id
		bolt := c.newBolt()
		if bolt == nil {
			b.w.fatal(c.id, id, errNilInstance)
			return
		}
		t := &boltTask{id: id, bolt: bolt, cnt: b.taskCounts(id)}
		t.out = &OutputCollector{e: b.executor, task: id, cnt: t.cnt}
		b.tasks = append(b.tasks, t)
		info := TaskInfo{Component: c.id, Task: id, Index: int(id - c.taskIDs[0]), NumTasks: c.tasks, topo: b.w.plan.topo}
		if err := bolt.Prepare(b.w.ctx, info, t.out); err != nil {
			b.w.fatal(c.id, id, fmt.Errorf("prepare: %w", err))
			return
		}
		b.prepared = i + 1
	}
	b.borrows = true
	for _, t := range b.tasks {
		if _, ok := t.bolt.(Borrower); !ok {
			b.borrows = false
		}
	}
	// The clock is read once per batch: a batch taken without waiting
	// starts when the previous one ended.
	var ended time.Time
	for {
		select {
		case batch := <-b.in:
			ended = b.execute(batch, ended)
			continue
		case <-b.w.stopping:
			return
		default:
		}
		b.flush()
		select {
		case batch := <-b.in:
			ended = b.execute(batch, time.Time{})
		case <-b.w.stopping:
			return
		}
	}
}

// execute runs a batch that started at start (read now if zero) and
// returns when it ended.
func (b *boltExecutor) execute(batch []Tuple, start time.Time) time.Time {
	if start.IsZero() {
		start = b.clock.Now()
	}
	first := b.plan.tasks[0]
	for i := range batch {
		t := &batch[i]
		task := b.tasks[t.dstTask-first]
		b.current = task.id
		task.cnt.executed++
		task.bolt.Execute(t)
	}
	if b.borrows {
		giveBack(b.w.boltFree[b.idx], batch)
	}
	end := b.clock.Now()
	if n := len(batch); n > 0 {
		d := end.Sub(start)
		b.stats.busy.Add(int64(d))
		b.stats.execute.RecordN(d/time.Duration(n), uint64(n))
	}
	return end
}

func (b *boltExecutor) cleanup() {
	b.flushQuietly()
	for _, t := range b.tasks[:b.prepared] {
		b.current = t.id
		if err := callQuietly(t.bolt.Cleanup); err != nil {
			b.w.log.Warn("cleaning up bolt", "component", b.plan.comp.id, "task", t.id, "err", err)
		}
	}
}
