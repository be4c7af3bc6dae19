package transport

import (
	"context"
	"fmt"
	"sync"

	"github.com/squallstream/squall/internal/notify"
)

// queue is a client's outgoing queue: messages encoded into frames, ready
// to be written with one call. Senders append under mu; the writer takes
// everything at once by swapping buffers, so the frames it takes are as
// large as the backlog allows (up to the frame limits) and senders never
// wait for the network, only for space.
//
// The bound: a message is admitted while fewer than limit bytes wait, so
// at most limit plus one message wait, and the writer holds at most as
// much again while it writes.
//
// enc.cost is what the open frame will charge the receiver's decoding
// budget: a message that would take the frame over FrameBudget starts a
// frame of its own, and one that is over the budget alone is refused.
type queue struct {
	mu   sync.Mutex
	enc  *encoder // its w.b holds the waiting frames
	open int      // offset of the open frame's header in enc.w.b, or -1
	n    int      // messages in the open frame
	msgs int      // messages waiting, in all frames
	fr   int      // frames waiting, the open one included
	// queued counts the messages ever admitted; taken those handed to
	// the writer.
	queued, taken uint64

	spare  []byte // the writer's last buffer, for reuse
	closed bool

	limit, frameMsgs, frameBytes, maxBody int

	space notify.Signal // broadcast when bytes leave the queue, and on close
	ready chan struct{} // capacity 1: poked after every put
}

func newQueue(cfg ClientConfig) *queue {
	return &queue{enc: newEncoder(cfg.Types), open: -1,
		limit: cfg.QueueBytes, frameMsgs: cfg.FrameMessages, frameBytes: cfg.FrameBytes,
		maxBody: cfg.MaxFrameBytes, ready: make(chan struct{}, 1)}
}

// put encodes msgs into the queue in order, waiting for space as needed.
// On error a prefix of msgs may have been admitted.
func (q *queue) put(ctx context.Context, msgs []Message) error {
	for i := 0; i < len(msgs); {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return ErrClosed
		}
		if len(q.enc.w.b) >= q.limit {
			wait := q.space.Wait()
			q.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		start := i
		var err error
		for i < len(msgs) && len(q.enc.w.b) < q.limit {
			if err = q.add(&msgs[i]); err != nil {
				break
			}
			i++
		}
		q.queued += uint64(i - start)
		q.mu.Unlock()
		if i > start {
			select {
			case q.ready <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// add encodes m into the open frame, or into a new one. Called with mu
// held.
func (q *queue) add(m *Message) error {
	if q.open < 0 || q.n >= q.frameMsgs || len(q.enc.w.b)-q.open >= q.frameBytes {
		q.startFrame()
	}
	start, before := len(q.enc.w.b), q.enc.cost
	if err := q.enc.message(m); err != nil {
		q.enc.cost = before
		q.unadd(start)
		return err
	}
	size, cost := len(q.enc.w.b)-start, q.enc.cost-before
	alone := size + frameHeader - lenPrefix
	if alone > q.maxBody {
		q.enc.cost = before
		q.unadd(start)
		return fmt.Errorf("%w: %v for task %v encodes to %d bytes, MaxFrameBytes is %d",
			ErrMessageTooLarge, m.Kind, m.Task, size, q.maxBody)
	}
	if costFrameBase+cost > FrameBudget(alone) {
		q.enc.cost = before
		q.unadd(start)
		return fmt.Errorf("%w: %v for task %v encodes to %d bytes that may take %d to decode, over the budget of %d (values too dense: send them as []byte)",
			ErrMessageTooLarge, m.Kind, m.Task, size, costFrameBase+cost, FrameBudget(alone))
	}
	if body := start + size - q.open - lenPrefix; q.n > 0 && (body > q.maxBody || q.enc.cost > FrameBudget(body)) {
		// The open frame cannot take it: move it into a frame of its own.
		b := append(q.enc.w.b, make([]byte, frameHeader)...)
		copy(b[start+frameHeader:], b[start:start+size])
		q.enc.w.b = b[:start]
		q.startFrame()
		q.enc.w.b, q.enc.cost = b, costFrameBase+cost
	}
	q.n++
	q.msgs++
	return nil
}

// unadd drops a message that failed to encode, and its frame if it was
// the frame's first.
func (q *queue) unadd(start int) {
	q.enc.w.b = q.enc.w.b[:start]
	if q.n == 0 {
		q.enc.w.b = q.enc.w.b[:q.open]
		q.open = -1
		q.fr--
	}
}

// startFrame closes the open frame, if any, and opens a new one.
func (q *queue) startFrame() {
	q.closeFrame()
	q.open = len(q.enc.w.b)
	q.enc.w.b = append(q.enc.w.b, make([]byte, frameHeader)...)
	q.n, q.enc.cost = 0, costFrameBase
	q.fr++
}

func (q *queue) closeFrame() {
	if q.open >= 0 {
		b := q.enc.w.b
		putFrameHeader(b[q.open:], q.n, len(b)-q.open-frameHeader)
		q.open = -1
	}
}

// take hands every waiting frame to the writer: b holds frames messages
// in frames complete frames. b is nil when nothing waits. The writer
// gives b back with recycle.
func (q *queue) take() (b []byte, msgs, frames int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.msgs == 0 {
		return nil, 0, 0
	}
	q.closeFrame()
	b, msgs, frames = q.enc.w.b, q.msgs, q.fr
	q.enc.w.b, q.spare = q.spare[:0], nil
	q.msgs, q.fr = 0, 0
	q.taken += uint64(msgs)
	q.space.Broadcast()
	return b, msgs, frames
}

// recycle gives the writer's buffer back for reuse.
func (q *queue) recycle(b []byte) {
	q.mu.Lock()
	q.spare = b
	q.mu.Unlock()
}

// close refuses further puts, wakes blocked senders and returns the
// number of messages that were still waiting.
func (q *queue) close() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0
	}
	q.closed = true
	dropped := q.msgs
	q.enc.w.b, q.msgs, q.fr, q.open = nil, 0, 0, -1
	q.space.Broadcast()
	return dropped
}

// counts returns the messages ever admitted and ever taken, and the bytes
// waiting now.
func (q *queue) counts() (queued, taken uint64, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued, q.taken, len(q.enc.w.b)
}
