package topology

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/squallstream/squall/acker"
	"github.com/squallstream/squall/transport"
)

// network is a cluster-mode worker's connections: the transport server
// that delivers peers' messages to the local executors, and one peer (a
// transport client and its sender) per worker this one sends to. It lives
// as long as the Running, across restarts of the local executors.
//
// Outgoing, a remote executor's input queues are its peer's queues
// (newWorker), so executors batch and block on them exactly as on a local
// executor's queue; in particular a spout blocked on a full peer queue
// keeps draining its own input (outbox.go). The peer's sender goroutine
// turns each batch into transport messages and blocks in Client.Send
// while the connection's queue is full, which fills the peer queues:
// backpressure reaches the emitting executors without a new blocking
// path.
//
// Incoming, Deliver turns one frame's messages for one task into one
// batch for that task's executor and blocks while its queue is full,
// which stops the connection from being read (transport.Handler).
type network struct {
	r      *Running
	log    *slog.Logger
	server *transport.Server
	peers  []*peer
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// dropped counts messages that arrived for no running executor (the
	// local executors were restarting or stopping) or that did not fit
	// the topology; their trees time out.
	dropped atomic.Uint64

	// losses records the peers found restarted, or with lost writes, on
	// reconnecting; the spout executors fail their older trees
	// (peerloss.go).
	losses *peerLosses
}

// peer is the sending side of one connection to another worker.
type peer struct {
	id       WorkerID
	client   *transport.Client
	tuples   chan []Tuple
	acks     chan []ackerMsg
	outcomes chan []spoutMsg

	// The batches the sender has converted and sent, emptied, for the
	// outboxes to fill again (newBuffer): a remote executor's batches
	// live on this side of the wire, so they need not be allocated for
	// every batch. At most freeBatches of each wait.
	freeTuples   chan []Tuple
	freeAcks     chan []ackerMsg
	freeOutcomes chan []spoutMsg

	// Scratch of the sender goroutine: Send encodes before it returns, so
	// both are reused for every batch.
	msgs    []transport.Message
	anchors []transport.Anchor
	queued  uint64 // messages the client accepted (only the sender sends)
}

// startNetwork starts the worker's transport server and its clients.
// logger is Config.Logger as given: nil leaves the transport's own
// default (slog.Default()), so that refused connections and bad frames
// are never logged to the runtime's discarding default.
func startNetwork(ctx context.Context, r *Running, spec WorkerSpec, logger *slog.Logger) (*network, error) {
	p, cfg := r.plan, r.plan.cfg
	a := p.cluster
	n := &network{r: r, log: cfg.Logger.With("topology", r.name, "worker", a.self), losses: &peerLosses{}}
	ctx, n.cancel = context.WithCancel(ctx)
	types := p.topo.types
	sc := spec.Server
	sc.Topology, sc.Worker, sc.Handler, sc.Types = r.name, string(a.self), n, types
	if spec.Listener != nil {
		sc.Listener = spec.Listener
	}
	if sc.Logger == nil {
		sc.Logger = logger
	}
	if sc.Clock == nil {
		sc.Clock = cfg.Clock
	}
	srv, err := transport.Listen(ctx, sc)
	if err != nil {
		n.cancel()
		return nil, fmt.Errorf("topology: worker %s: %w", a.self, err)
	}
	n.server = srv
	for i, id := range a.peers {
		cc := spec.Client
		cc.Topology, cc.Worker, cc.Peer, cc.Addr, cc.Types = r.name, string(a.self), string(id), a.addrs[i], types
		cc.Reconnected = n.reconnected(id, spec.Client.Reconnected)
		if cc.Logger == nil {
			cc.Logger = logger
		}
		if cc.Clock == nil {
			cc.Clock = cfg.Clock
		}
		cli, err := transport.NewClient(ctx, cc)
		if err != nil {
			n.close()
			return nil, fmt.Errorf("topology: worker %s: peer %s: %w", a.self, id, err)
		}
		pe := &peer{id: id, client: cli, tuples: make(chan []Tuple, cfg.QueueCapacity),
			acks: make(chan []ackerMsg, cfg.QueueCapacity), outcomes: make(chan []spoutMsg, cfg.QueueCapacity),
			freeTuples: make(chan []Tuple, freeBatches), freeAcks: make(chan []ackerMsg, freeBatches),
			freeOutcomes: make(chan []spoutMsg, freeBatches)}
		n.peers = append(n.peers, pe)
		n.wg.Add(1)
		go n.send(ctx, pe)
	}
	return n, nil
}

// close stops the senders, the clients (dropping what they still hold:
// those trees time out) and the server.
func (n *network) close() {
	n.cancel()
	n.wg.Wait()
	for _, pe := range n.peers {
		pe.client.Close()
	}
	if n.server != nil {
		n.server.Close()
	}
}

// send forwards one peer's batches until ctx ends. Client.Send has
// encoded a batch when forward returns, so the batch is given back.
func (n *network) send(ctx context.Context, pe *peer) {
	defer n.wg.Done()
	for {
		select {
		case b := <-pe.tuples:
			n.forward(ctx, pe, pe.tupleMessages(b))
			clear(pe.msgs) // the tuples' values
			giveBack(pe.freeTuples, b)
		case b := <-pe.acks:
			n.forward(ctx, pe, pe.ackerMessages(n.r.plan, b))
			giveBack(pe.freeAcks, b)
		case b := <-pe.outcomes:
			n.forward(ctx, pe, pe.outcomeMessages(b))
			giveBack(pe.freeOutcomes, b)
		case <-ctx.Done():
			return
		}
	}
}

// freeBatches bounds the emptied batches of each kind a peer keeps for
// reuse.
const freeBatches = 4

// forward sends msgs to the peer. A message the wire cannot carry (a
// value of a type neither built in nor declared with Builder.ValueTypes)
// is reported and dropped, and its tree times out; the others are sent,
// each once.
func (n *network) forward(ctx context.Context, pe *peer, msgs []transport.Message) {
	for len(msgs) > 0 {
		err := pe.client.Send(ctx, msgs...)
		if err == nil {
			pe.queued += uint64(len(msgs))
			return
		}
		if ctx.Err() != nil || errors.Is(err, transport.ErrClosed) {
			return
		}
		// Send queued the messages before the one it refused; only this
		// goroutine sends on the client, so its count says how many.
		k := int(pe.client.Stats().Queued - pe.queued)
		pe.queued += uint64(k)
		if k >= len(msgs) {
			return
		}
		n.refused(msgs[k], err)
		msgs = msgs[k+1:]
	}
}

// refused reports a message the transport refused.
func (n *network) refused(m transport.Message, err error) {
	comp := n.r.plan.componentOf(m.Source)
	n.r.errors.add(ReportedError{Component: comp, Task: m.Source, Time: n.r.plan.cfg.Clock.Now(),
		Err: fmt.Errorf("topology: a %v to task %d cannot be sent to another worker: %w", m.Kind, m.Task, err)})
	n.log.Error("message refused by the transport; its tree will time out", "kind", m.Kind, "source", m.Source, "task", m.Task, "err", err)
}

func (pe *peer) tupleMessages(b []Tuple) []transport.Message {
	msgs, anchors := pe.msgs[:0], pe.anchors[:0]
	for i := range b {
		t := &b[i]
		start := len(anchors)
		for j := range t.ids.len() {
			re := t.ids.at(j)
			anchors = append(anchors, transport.Anchor{Root: re.root, Edge: re.id})
		}
		msgs = append(msgs, transport.Message{Kind: transport.KindTuple, Task: t.dstTask,
			Stream: t.schema.stream, Source: t.srcTask, Values: t.values})
		if len(anchors) > start {
			msgs[len(msgs)-1].Anchors = anchors[start:len(anchors):len(anchors)]
		}
	}
	pe.msgs, pe.anchors = msgs, anchors
	return msgs
}

// ackerMessages converts acker messages. They do not name their acker
// task: that is the task their root hashes to (plan.ackerFor), the same in
// every worker.
func (pe *peer) ackerMessages(p *plan, b []ackerMsg) []transport.Message {
	msgs := pe.msgs[:0]
	for _, m := range b {
		tm := transport.Message{Task: p.ackerFor(m.root), Root: m.root}
		switch m.kind {
		case msgInit:
			tm.Kind, tm.XOR, tm.Source = transport.KindInit, m.val, m.task
		case msgAck:
			tm.Kind, tm.XOR = transport.KindAck, m.val
		case msgFail:
			tm.Kind = transport.KindFail
		case msgReset:
			tm.Kind = transport.KindReset
		}
		msgs = append(msgs, tm)
	}
	pe.msgs = msgs
	return msgs
}

func (pe *peer) outcomeMessages(b []spoutMsg) []transport.Message {
	msgs := pe.msgs[:0]
	for _, m := range b {
		msgs = append(msgs, transport.Message{Kind: transport.KindOutcome, Task: m.task, Root: m.root, Status: m.status})
	}
	pe.msgs = msgs
	return msgs
}

// Deliver implements transport.Handler: it hands msgs, all for task, to
// the executor of task as one batch. Before the local executors start,
// and while they restart after a crash, it waits for them (the connection
// is not read meanwhile); once this worker stops it drops. Messages that
// do not fit the topology (a task this worker does not run, a stream the
// source does not declare, a kind the task does not take) are dropped
// one by one and counted; their trees time out.
func (n *network) Deliver(ctx context.Context, from string, task transport.TaskID, msgs []transport.Message) error {
	p := n.r.plan
	if task < 0 || int(task) >= len(p.taskExec) || !p.local(p.taskExec[task]) {
		n.drop(from, task, len(msgs), "no local executor runs the task")
		return nil
	}
	exec := p.taskExec[task]
	var batch any // nil if no message converts
	switch p.execs[exec].kind {
	case boltExec:
		if b := n.tuples(from, task, msgs); b != nil {
			batch = b
		}
	case ackerExec:
		if b := convert(n, from, task, msgs, n.ackerMessage); b != nil {
			batch = b
		}
	case spoutExec:
		if b := convert(n, from, task, msgs, outcome); b != nil {
			batch = b
		}
	}
	if batch == nil {
		return nil
	}
	for {
		w, err := n.worker(ctx)
		if err != nil {
			return err
		}
		if w == nil {
			n.drop(from, task, len(msgs), "the worker is stopping")
			return nil
		}
		var ok bool
		switch b := batch.(type) {
		case []Tuple:
			ok, err = deliver(ctx, w, w.boltIn[exec], b)
		case []ackerMsg:
			ok, err = deliver(ctx, w, w.ackerIn[exec], b)
		case []spoutMsg:
			ok, err = deliver(ctx, w, w.spoutIn[exec], b)
		}
		if ok || err != nil {
			return err
		}
		// That incarnation stopped before taking the batch: wait for the
		// next one.
	}
}

// worker returns the running worker, waiting while the executors
// (re)start; nil once the Running stops.
func (n *network) worker(ctx context.Context) (*worker, error) {
	for {
		started := n.r.started.Wait()
		if w := n.r.current.Load(); w != nil && !w.stopped() {
			return w, nil
		}
		select {
		case <-started:
		case <-n.r.stop:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// convert turns msgs into a batch for an executor, dropping the ones that
// do not convert; nil if none does.
func convert[T any](n *network, from string, task TaskID, msgs []transport.Message, conv func(*transport.Message) (T, error)) []T {
	batch := make([]T, 0, len(msgs))
	for i := range msgs {
		v, err := conv(&msgs[i])
		if err != nil {
			n.drop(from, task, 1, err.Error())
			continue
		}
		batch = append(batch, v)
	}
	if len(batch) == 0 {
		return nil
	}
	return batch
}

// deliver puts batch on an executor's queue, waiting while it is full; it
// reports false if the worker stopped first.
func deliver[T any](ctx context.Context, w *worker, ch chan []T, batch []T) (bool, error) {
	select {
	case ch <- batch:
		return true, nil
	case <-w.stopping:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// drop counts messages that cannot be delivered; the first drop is logged
// as a warning, later ones at debug level (a restart drops many).
func (n *network) drop(from string, task TaskID, msgs int, why string) {
	level := slog.LevelDebug
	if n.dropped.Add(uint64(msgs)) == uint64(msgs) {
		level = slog.LevelWarn
	}
	n.log.Log(context.Background(), level, "messages from a peer dropped; their trees will time out",
		"from", from, "task", task, "messages", msgs, "reason", why)
}

// tuples converts tuple messages for a bolt task into one batch,
// dropping the ones that do not fit; nil if none does. It fills the
// batch in place: a Tuple is large and holds pointers, so copying one
// into the batch would cost write barriers whenever the GC runs.
func (n *network) tuples(from string, task TaskID, msgs []transport.Message) []Tuple {
	batch := make([]Tuple, len(msgs))
	k := 0
	// The schema of the previous message's source and stream: usually
	// this message's too.
	var s *schema
	src, stream, known := TaskID(0), "", false
	for i := range msgs {
		m := &msgs[i]
		if !known || m.Source != src || m.Stream != stream {
			s, src, stream, known = n.r.plan.schemaOf(m.Source, m.Stream), m.Source, m.Stream, true
		}
		if err := tuple(m, s, &batch[k]); err != nil { // batch[k] untouched
			n.drop(from, task, 1, err.Error())
			continue
		}
		k++
	}
	if k == 0 {
		return nil
	}
	return batch[:k:k]
}

// tuple converts a tuple message for a bolt task into t, given the
// schema of its source's stream (nil if it declares none). On error it
// leaves t as it was.
func tuple(m *transport.Message, s *schema, t *Tuple) error {
	if m.Kind != transport.KindTuple {
		return fmt.Errorf("a %v message for a bolt task", m.Kind)
	}
	if s == nil {
		return fmt.Errorf("task %d declares no stream %q", m.Source, m.Stream)
	}
	if len(m.Values) != len(s.fields) {
		return fmt.Errorf("%d values on stream %v", len(m.Values), s)
	}
	t.values, t.schema, t.srcTask, t.dstTask = m.Values, s, m.Source, m.Task
	for _, a := range m.Anchors {
		if a.Root != 0 {
			t.ids.xor(a.Root, a.Edge)
		}
	}
	return nil
}

func (n *network) ackerMessage(m *transport.Message) (ackerMsg, error) {
	a := ackerMsg{root: m.Root, val: m.XOR}
	switch m.Kind {
	case transport.KindInit:
		// The acker sends the tree's outcome to this task.
		if p := n.r.plan; m.Source < 0 || int(m.Source) >= len(p.taskExec) || p.execs[p.taskExec[m.Source]].kind != spoutExec {
			return a, fmt.Errorf("an init from task %d, which is no spout task", m.Source)
		}
		a.kind, a.task = msgInit, m.Source
	case transport.KindAck:
		a.kind = msgAck
	case transport.KindFail:
		a.kind = msgFail
	case transport.KindReset:
		a.kind = msgReset
	default:
		return a, fmt.Errorf("a %v message for an acker task", m.Kind)
	}
	return a, nil
}

func outcome(m *transport.Message) (spoutMsg, error) {
	if m.Kind != transport.KindOutcome || m.Status > acker.TimedOut {
		return spoutMsg{}, fmt.Errorf("a %v message (status %v) for a spout task", m.Kind, m.Status)
	}
	return spoutMsg{task: m.Task, root: m.Root, status: m.Status}, nil
}

// componentOf returns the component id of task, "__acker" for an acker
// task, or "" for no task.
func (p *plan) componentOf(task TaskID) string {
	if task < 0 || int(task) >= len(p.taskExec) {
		return ""
	}
	return p.execs[p.taskExec[task]].name()
}

// schemaOf returns the schema of stream as declared by the component of
// task, or nil.
func (p *plan) schemaOf(task TaskID, stream string) *schema {
	if task < 0 || int(task) >= len(p.taskExec) {
		return nil
	}
	c := p.execs[p.taskExec[task]].comp
	if c == nil {
		return nil
	}
	return c.outputs[stream]
}
