package trident

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// ErrNoEndMark is matched by the error of Running.WaitCaughtUp when a
// stream's source cannot tell where it ends: its Lister is not a
// spout.EndMarker or its metadata not a spout.Positioned (a BatchSource
// never can). The error names the streams.
var ErrNoEndMark = errors.New("trident: the source cannot tell where it ends")

// endMarks is how WaitCaughtUp asks a partitioned source where it ends
// and how far its committed batches reached.
type endMarks struct {
	// mark returns the source's mark now (spout.EndMarker); an error
	// matching ErrNoEndMark if its Lister cannot tell.
	mark func(ctx context.Context) (map[spout.Partition]int64, error)
	// committedEnd returns spout.Positioned's End of p's last batch
	// committed at or before committed, and false if there is none.
	committedEnd func(ctx context.Context, store coordstore.Store, owner coordstore.Fence, stream string, p spout.Partition, committed txn.TxID) (int64, bool, error)
}

// endMarksOf returns the endMarks of a partitioned source with metadata
// M, or nil if M is not spout.Positioned.
func endMarksOf[M any](newLister func() spout.Lister, opts []SourceOption[M]) *endMarks {
	var zero M
	if _, ok := any(zero).(spout.Positioned); !ok {
		return nil
	}
	var cfg spout.ExecutorConfig[M]
	applySourceOptions(&cfg, opts)
	codec := cfg.Codec
	return &endMarks{
		mark: func(ctx context.Context) (map[spout.Partition]int64, error) {
			if newLister == nil {
				return nil, ErrNoEndMark
			}
			l := newLister()
			if c, ok := l.(io.Closer); ok {
				defer c.Close()
			}
			em, ok := l.(spout.EndMarker)
			if !ok {
				return nil, ErrNoEndMark
			}
			return em.EndMark(ctx)
		},
		committedEnd: func(ctx context.Context, store coordstore.Store, owner coordstore.Fence, stream string, p spout.Partition, committed txn.TxID) (int64, bool, error) {
			m, ok, err := spout.CommittedMeta(ctx, store, owner, stream, codec, p, committed)
			if err != nil || !ok {
				return 0, false, err
			}
			return any(m).(spout.Positioned).End(), true, nil
		},
	}
}

// streamMark is the mark of one stream, taken by WaitCaughtUp.
type streamMark struct {
	stream string
	src    *endMarks
	mark   map[spout.Partition]int64
}

// WaitCaughtUp waits until the topology has processed and committed
// everything its sources had available at the call (Spark's
// processAllAvailable): it takes every stream's mark (spout.EndMarker:
// for the Kafka spout, the end offset of every partition) and returns
// once the committed batches reached it on every partition, the topology
// halted (its error), or ctx is done. Records that arrive after the call
// may or may not be committed by then.
//
// Every stream's source must tell where it ends (a partitioned source
// whose Lister is a spout.EndMarker and whose metadata is a
// spout.Positioned, as the Kafka spout's are); otherwise WaitCaughtUp
// returns at once an error matching ErrNoEndMark that names the streams
// that cannot. DRPC streams are left out: they have nothing available
// but the requests their callers wait on. It calls each source's Lister
// constructor once (and closes the result if it is an io.Closer) and
// reads the committed metadata from Config.Store after each commit; it
// needs the topology active (batches start) to make progress.
func (r *Running) WaitCaughtUp(ctx context.Context) error {
	marks, err := r.endMarks(ctx)
	if err != nil {
		return err
	}
	for {
		committed := r.Committed()
		ok, err := r.reached(ctx, marks, committed)
		if err != nil || ok {
			return err
		}
		if err := r.WaitCommitted(ctx, committed+1); err != nil {
			return err
		}
	}
}

// endMarks takes the mark of every stream but the DRPC ones.
func (r *Running) endMarks(ctx context.Context) ([]streamMark, error) {
	drpc := map[*node]bool{}
	for _, d := range r.t.drpc {
		drpc[d.src] = true
	}
	var marks []streamMark
	var cannot []string
	for _, n := range r.t.sources {
		if drpc[n] {
			continue
		}
		src := n.src
		if src.endMarks == nil {
			cannot = append(cannot, src.id)
			continue
		}
		marks = append(marks, streamMark{stream: src.id, src: src.endMarks})
	}
	if len(cannot) > 0 {
		return nil, fmt.Errorf("%w: streams %s", ErrNoEndMark, strings.Join(quoted(cannot), ", "))
	}
	for i := range marks {
		m, err := marks[i].src.mark(ctx)
		if errors.Is(err, ErrNoEndMark) {
			cannot = append(cannot, marks[i].stream)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("trident: the end mark of stream %q: %w", marks[i].stream, err)
		}
		marks[i].mark = m
	}
	if len(cannot) > 0 {
		return nil, fmt.Errorf("%w: streams %s", ErrNoEndMark, strings.Join(quoted(cannot), ", "))
	}
	return marks, nil
}

// reached reports whether the batches committed up to txid committed
// reached every mark.
func (r *Running) reached(ctx context.Context, marks []streamMark, committed txn.TxID) (bool, error) {
	owner := r.status.Owner()
	for _, m := range marks {
		for _, p := range slices.Sorted(maps.Keys(m.mark)) {
			end, ok, err := m.src.committedEnd(ctx, r.cfg.Store, owner, m.stream, p, committed)
			if err != nil {
				return false, fmt.Errorf("trident: the committed position of stream %q partition %s: %w", m.stream, p, err)
			}
			if !ok || end < m.mark[p] {
				return false, nil
			}
		}
	}
	return true, nil
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
