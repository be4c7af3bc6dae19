package transport

// grouper splits a frame's messages by destination task, keeping their
// order within each task: into its runs of consecutive messages for one
// task, in place, when there are at most maxRuns, else into one group
// per task, sorted into a buffer. Its buffers are reused from frame to
// frame.
type grouper struct {
	index  map[TaskID]int
	tasks  []TaskID
	starts []int
	slot   []int
	next   []int
	sorted []Message
}

func (g *grouper) each(msgs []Message, fn func(TaskID, []Message) error) error {
	if len(msgs) == 0 {
		return nil
	}
	if g.runs(msgs) {
		for i, task := range g.tasks {
			end := len(msgs)
			if i+1 < len(g.starts) {
				end = g.starts[i+1]
			}
			if err := fn(task, msgs[g.starts[i]:end]); err != nil {
				return err
			}
		}
		return nil
	}
	if g.index == nil {
		g.index = map[TaskID]int{}
	}
	clear(g.index)
	g.tasks, g.starts, g.slot = g.tasks[:0], g.starts[:0], g.slot[:0]
	for _, m := range msgs { // count per task, in order of first appearance
		i, ok := g.index[m.Task]
		if !ok {
			i = len(g.tasks)
			g.index[m.Task] = i
			g.tasks = append(g.tasks, m.Task)
			g.starts = append(g.starts, 0)
		}
		g.starts[i]++
		g.slot = append(g.slot, i)
	}
	sum := 0
	for i, n := range g.starts { // counts to start offsets
		g.starts[i], sum = sum, sum+n
	}
	g.sorted = append(g.sorted[:0], msgs...) // sized; overwritten below
	g.next = append(g.next[:0], g.starts...)
	for k, m := range msgs {
		i := g.slot[k]
		g.sorted[g.next[i]] = m
		g.next[i]++
	}
	for i, task := range g.tasks {
		end := len(msgs)
		if i+1 < len(g.starts) {
			end = g.starts[i+1]
		}
		if err := fn(task, g.sorted[g.starts[i]:end]); err != nil {
			return err
		}
	}
	clear(g.sorted)
	return nil
}

// maxRuns is the most runs a frame is delivered in as it is; a frame of
// more runs is grouped by task.
const maxRuns = 16

// runs splits msgs into runs of consecutive messages for one task,
// recording each run's task and start in g.tasks and g.starts, and
// reports whether there are at most maxRuns. Senders batch per
// destination, so a frame is usually a few long runs.
func (g *grouper) runs(msgs []Message) bool {
	g.tasks, g.starts = g.tasks[:0], g.starts[:0]
	for i := range msgs {
		if i > 0 && msgs[i].Task == msgs[i-1].Task {
			continue
		}
		if len(g.tasks) == maxRuns {
			return false
		}
		g.tasks = append(g.tasks, msgs[i].Task)
		g.starts = append(g.starts, i)
	}
	return true
}
