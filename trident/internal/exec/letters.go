package exec

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/txn"
)

// rejected handles an operation's error for the tuple (values, fields) of
// batch a: a rejection goes to the dead letters and counts as handled
// (nil); any other error is returned as is.
func (s *Processor) rejected(err error, a txn.Attempt, fields []string, values []any) error {
	var r *rejection
	if !errors.As(err, &r) {
		return err
	}
	if s.cfg.DeadLetters == nil {
		return fmt.Errorf("%w: %s task %d: %w", ErrNoDeadLetters, s.stage.Name, s.task.ID, r.err)
	}
	l := Rejected{Topology: s.task.Topology, Attempt: a, Fields: fields, Values: Detach(slices.Clone(values)), Err: r.err}
	l.ID = LetterID(l.Topology, s.stage.Name, a.TxID, l.Values)
	s.task.Status.AddRejected()
	if err := s.cfg.DeadLetters(s.ctx, l); err != nil {
		return fmt.Errorf("trident: writing a dead letter: %w", err)
	}
	s.task.Log.Warn("tuple rejected to dead letters", "component", s.stage.Name, "task", s.task.ID, "batch", a.String(),
		"fields", fields, "values", fmt.Sprint(values), "err", r.err)
	return nil
}

// LetterID is a dead letter's ID: "topology/component/txid/fingerprint",
// the fingerprint being FNV-1a (64 bits) of the values printed with %#v.
func LetterID(topology, component string, txid txn.TxID, values []any) string {
	h := fnv.New64a()
	h.Write(fmt.Appendf(nil, "%#v", values))
	return fmt.Sprintf("%s/%s/%d/%016x", topology, component, txid, h.Sum64())
}

// guardCorrupt installs, when Config.Quarantine is set, the handler that
// moves the corrupt values of state st to the quarantine.
func (s *Processor) guardCorrupt(st any) error {
	if s.cfg.Quarantine == nil {
		return nil
	}
	h, ok := st.(state.CorruptHandling)
	if !ok {
		return fmt.Errorf("%w: OnCorruptState is quarantine, but the state of %s (%T) cannot hand over corrupt values (state.CorruptHandling)",
			ErrInvalid, s.stage.Name, st)
	}
	h.SetCorruptHandler(func(ctx context.Context, e *state.DecodeError) error {
		c := Corrupt{Topology: s.task.Topology, Component: s.stage.Name, Attempt: s.committing, DecodeError: e}
		if err := s.cfg.Quarantine(ctx, c); err != nil {
			return fmt.Errorf("trident: quarantining %v: %w", e, err)
		}
		s.task.Status.AddQuarantined()
		s.task.Log.Warn("corrupt stored value quarantined; the key is treated as absent",
			"component", s.stage.Name, "task", s.task.ID, "batch", s.committing.String(), "map", e.Map,
			"key", e.Key.String(), "bytes", len(e.Raw), "err", e.Err)
		return nil
	})
	return nil
}
