package transport

import (
	"context"
	"math/bits"
	"sync"
	"time"
	"unsafe"

	"github.com/squallstream/squall/internal/notify"
)

// Decoding budgets. Decoding a frame body of n bytes may allocate at most
// FrameBudget(n) bytes, DecodeRatio times the body or DecodeFloor,
// whichever is more: the decoder charges every allocation against the
// frame's budget before it makes it (a declared length is checked against
// the bytes left and against the budget first), and rejects the frame
// with ErrOverBudget when the budget runs out. The client keeps its frames
// within the same budget (a message that cannot fit in a frame of its own
// is refused by Send with ErrMessageTooLarge), so a frame is rejected only
// when its sender is not a squall client of this version.
//
// The charges follow what the decoder allocates (the cost functions
// below): the frame's message slots, the chunks its values and anchors
// are carved from, boxed scalars, strings' and byte slices' bytes, maps'
// tables, each rounded up for the allocator's size classes. They are
// never below what the Go runtime allocates for the same values;
// TestDecodeAllocationWithinCharge measures it. Frames of typical tuples
// and acks are charged five to six bytes per byte on the wire; the
// densest values more (20 bytes per nil or small integer, 40 per empty
// []any, about 180 per level of nested one-entry maps). DecodeFloor
// leaves room for frames of the default FrameBytes of all but the
// densest maps, which the client puts in smaller frames.
const (
	DecodeRatio = 4
	DecodeFloor = 8 << 20
)

// FrameBudget returns the decoding budget of a frame body of n bytes.
func FrameBudget(n int) int { return max(DecodeRatio*n, DecodeFloor) }

// Sizes the decoder's charges are made of, in bytes.
const (
	costMessage  = int(unsafe.Sizeof(Message{}))   // a message's slot
	costSlot     = int(unsafe.Sizeof(any(nil)))    // a value in a tuple or an []any
	costScalar   = 8                               // a boxed number (but 0 … 255)
	costBoxStr   = int(unsafe.Sizeof(""))          // a boxed string header
	costBoxSlice = int(unsafe.Sizeof([]any(nil)))  // a boxed slice header
	costTime     = int(unsafe.Sizeof(time.Time{})) // a boxed time.Time
	costMapBase  = 48                              // a map's header
	costMapGroup = 320                             // a map group of 8 entries, rounded up
	costMapTable = 64                              // a map table's header and directory slot
	// costChunk is one chunk of arenaChunk values or anchors: 4080 bytes
	// (and an 8-byte header for values), in the 4096-byte size class.
	costChunk = 4096
)

// costAlloc bounds what allocating n bytes takes: the size rounded up to
// its size class (at most a fifth more, below 32 KiB; a page above),
// with a header.
func costAlloc(n int) int {
	if n == 0 {
		return 0
	}
	return n + n/4 + 16
}

// costString is the charge of a string value of n bytes, boxed.
func costString(n int) int {
	if n == 0 {
		return 0
	}
	return costBoxStr + costAlloc(n)
}

// costBin is the charge of a []byte value of n bytes, boxed.
func costBin(n int) int { return costBoxSlice + costAlloc(n) }

// costArray is the charge of an []any value of n elements, boxed.
func costArray(n int) int { return costBoxSlice + costAlloc(n*costSlot) }

// costExt is the charge of a value of a registered type encoded in n
// bytes: its box and a copy of its data. What its decoder allocates
// beyond that is not known to the transport.
func costExt(n int) int { return 2*costSlot + costAlloc(n) }

// costInt is the charge of a boxed integer with these bits: Go boxes 0 …
// 255 without allocating.
func costInt(u uint64) int {
	if u < 256 {
		return 0
	}
	return costScalar
}

// costMap is the charge of a map[string]any made for n entries, its keys
// and values aside: a header, then one group of 8 slots for up to 8
// entries, else groups for n at a load of 7/8, rounded up to a power of
// two, in tables of up to 1024 slots.
func costMap(n int) int {
	switch {
	case n == 0:
		return costMapBase
	case n <= 8:
		return costMapBase + costMapGroup
	}
	slots := 1 << bits.Len(uint((n*8+6)/7-1))
	return costMapBase + slots/8*costMapGroup + (slots/1024+1)*costMapTable
}

// chunkMeter follows the chunks of an arena.Slices of 16-byte elements
// (values; anchors are 16 bytes too) with Chunk arenaChunk, to charge what its Take allocates: a new chunk
// when the current one has fewer than n elements left, and a slice of
// exactly n when n is more than a chunk.
type chunkMeter struct{ left int }

// take returns the charge of taking n elements.
func (m *chunkMeter) take(n int) int {
	switch {
	case n <= m.left:
		m.left -= n
		return 0
	case n > arenaChunk:
		m.left = 0
		return costAlloc(costSlot * n)
	}
	m.left = arenaChunk - n
	return costChunk
}

// What the encoder counts, to bound what decoding a frame is charged (the
// decoder's charges depend on its arenas' state, the encoder's count does
// not). A frame starts at costFrameBase: its message slots' rounding and
// a chunk of values and one of anchors. Each message then counts its
// slot, rounded up, and each take of n values or anchors costTake(n).
// The chunkMeter gives a chunk of arenaChunk up only for a take of m
// more than it has left, so the chunk's elements taken plus m exceed
// arenaChunk: the chunks a frame gives up hold fewer elements than twice
// those of the takes that fit a chunk plus those of the larger takes;
// one more chunk may be started and not given up.
const (
	costFrameBase    = 16 + 2*costChunk
	costMessageBound = costMessage + costMessage/4
)

// costTake bounds the charge of taking n values or anchors: a share of
// the chunks for giving one up, and, for n up to a chunk, a share of the
// chunk it is taken from, or else its own slice.
func costTake(n int) int {
	share := (costChunk*n + arenaChunk - 1) / arenaChunk
	if n > arenaChunk {
		return share + costAlloc(costSlot*n)
	}
	return 2 * share
}

// connBudget bounds what the decoded frames of one connection hold until
// the handler has taken them (ServerConfig.ConnBudget): the reader
// reserves a frame's budget before decoding it, gives back what the frame
// was not charged once it is decoded, and the rest once it is delivered.
type connBudget struct {
	mu    sync.Mutex
	limit int
	held  int
	freed notify.Signal
}

// acquire takes n bytes, waiting while they do not fit and something is
// held (so a frame larger than the whole budget still passes, alone). It
// fails only when ctx ends.
func (b *connBudget) acquire(ctx context.Context, n int) error {
	for {
		b.mu.Lock()
		if b.held == 0 || b.held+n <= b.limit {
			b.held += n
			b.mu.Unlock()
			return nil
		}
		wait := b.freed.Wait()
		b.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release gives back n bytes.
func (b *connBudget) release(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
	b.freed.Broadcast()
}
