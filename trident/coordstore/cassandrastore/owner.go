package cassandrastore

import (
	"context"
	"fmt"

	"github.com/squallstream/squall/trident/coordstore"
)

// Acquire implements coordstore.Store: a compare-and-set of the owner's
// generation from the value a serial read returned. Losing to a
// concurrent Acquire, or a transaction whose outcome is unknown, starts
// over from a new read: an Acquire that applied but whose answer was lost
// only leaves a generation unused.
func (st *Store) Acquire(ctx context.Context, name string) (coordstore.Generation, error) {
	if err := coordstore.ValidateStream(name); err != nil {
		return 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	op := fmt.Sprintf("acquire owner %q", name)
	o, err := st.readOwner(ctx, name)
	if err != nil {
		return 0, fail(op, err)
	}
	cur := o.gen
	for range attempts {
		row := map[string]any{}
		var applied bool
		if cur == 0 {
			applied, err = st.s.CAS(ctx, st.insertStmt, st.ns, []byte(name)).MapScanCAS(row)
		} else {
			applied, err = st.s.CAS(ctx, st.acquireStmt, int64(cur+1), st.ns, []byte(name), int64(cur)).MapScanCAS(row)
		}
		switch {
		case err == nil && applied:
			return cur + 1, nil
		case err == nil:
			cur = casGen(row) // another Acquire won: try from its generation
		case again(ctx, err):
			if o, err = st.readOwner(ctx, name); err != nil {
				return 0, fail(op, err)
			}
			cur = o.gen
		default:
			return 0, fail(op, err)
		}
	}
	return 0, fail(op, fmt.Errorf("gave up after %d tries under contention", attempts))
}

// Generation implements coordstore.Store. It reads at the serial
// consistency level.
func (st *Store) Generation(ctx context.Context, name string) (coordstore.Generation, error) {
	if err := coordstore.ValidateStream(name); err != nil {
		return 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	o, err := st.readOwner(ctx, name)
	if err != nil {
		return 0, fail(fmt.Sprintf("read the generation of owner %q", name), err)
	}
	return o.gen, nil
}

// LoadCoordinator implements coordstore.Store. It reads at the serial
// consistency level.
func (st *Store) LoadCoordinator(ctx context.Context, name string) (coordstore.Record, coordstore.Version, error) {
	if err := coordstore.ValidateStream(name); err != nil {
		return coordstore.Record{}, 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return coordstore.Record{}, 0, err
	}
	defer end()
	o, err := st.readOwner(ctx, name)
	if err != nil {
		return coordstore.Record{}, 0, fail(fmt.Sprintf("load coordinator of owner %q", name), err)
	}
	where := fmt.Sprintf("coordinator record of owner %q", name)
	switch {
	case o.version < 0:
		return coordstore.Record{}, 0, &coordstore.CorruptError{Where: where, Err: fmt.Errorf("version %d", o.version)}
	case o.version == 0:
		return coordstore.Record{}, 0, nil
	}
	r, err := decodeRecord(o.record)
	if err != nil {
		return coordstore.Record{}, 0, &coordstore.CorruptError{Where: where, Err: err}
	}
	return r, coordstore.Version(o.version), nil
}

// SwapCoordinator implements coordstore.Store with a lightweight
// transaction on the owner's generation and the record's version: the
// row it returns when not applied tells a superseded generation
// (ErrFenced) from a version conflict. When its outcome is unknown (a
// timeout), a serial read decides: the record and version it wrote are
// there (success), the generation moved (fenced), another version is
// there (conflict), or the old one still is (a retryable error).
func (st *Store) SwapCoordinator(ctx context.Context, f coordstore.Fence, old coordstore.Version, rec coordstore.Record) (coordstore.Version, error) {
	if err := coordstore.ValidateFence(f); err != nil {
		return 0, err
	}
	end, err := st.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	next := old + 1
	raw := encodeRecord(rec)
	row := map[string]any{}
	applied, err := st.s.CAS(ctx, st.swapStmt, int64(next), raw, st.ns, []byte(f.Owner), int64(f.Generation), int64(old)).MapScanCAS(row)
	if err != nil {
		return st.resolve(ctx, f, old, next, raw, err)
	}
	if applied {
		return next, nil
	}
	have, _ := row["version"].(int64)
	return 0, refused(f, old, casGen(row), have)
}

// refused returns the error of a swap by f from version old that was not
// applied, the owner's row holding generation gen and version have:
// ErrFenced if gen is not f's, else ErrConflict.
func refused(f coordstore.Fence, old coordstore.Version, gen coordstore.Generation, have int64) error {
	if gen != f.Generation {
		return coordstore.Fenced("coordinator of "+f.Owner, f, gen)
	}
	return &coordstore.ConflictError{Stream: f.Owner, Want: old, Have: coordstore.Version(max(have, 0))}
}

// resolve settles a swap that failed with cause: its outcome may be
// unknown.
func (st *Store) resolve(ctx context.Context, f coordstore.Fence, old, next coordstore.Version, raw []byte, cause error) (coordstore.Version, error) {
	op := fmt.Sprintf("swap coordinator of owner %q from version %d", f.Owner, old)
	if !again(ctx, cause) {
		return 0, fail(op, cause)
	}
	o, err := st.readOwner(ctx, f.Owner)
	if err != nil {
		return 0, fail(op+" (outcome unknown, and reading it back failed too: "+err.Error()+")", cause)
	}
	switch {
	case coordstore.Version(o.version) == next && string(o.record) == string(raw):
		return next, nil // applied (a later Acquire does not undo it)
	case o.gen != f.Generation || coordstore.Version(o.version) != old:
		return 0, refused(f, old, o.gen, o.version)
	}
	return 0, fail(op, cause) // not applied: the caller may try again
}
