package cassandra

import (
	"errors"
	"fmt"
	"math"

	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/internal/wire"
)

// The typed layouts split the envelope a map flavour stores into columns
// on the way in and rebuild the same envelope on the way out, so the map
// flavours above see the bytes they wrote.

// errLayout is wrapped by the error of a value that does not fit the
// table's layout: a map flavour other than the layout's.
var errLayout = errors.New("value does not fit the table's layout")

// bindValues returns the value columns' arguments for val.
func (t TableSpec) bindValues(val []byte) ([]any, error) {
	m := t.mapper()
	switch t.Layout {
	case Envelope:
		if val == nil {
			val = []byte{}
		}
		return []any{val}, nil
	case Opaque:
		o, err := wire.ParseOpaque(val)
		if err != nil {
			return nil, fmt.Errorf("%w (opaque): %v", errLayout, err)
		}
		txid, err := txidColumn(o.TxID)
		if err != nil {
			return nil, err
		}
		var curr any // null: removed (Storm's null curr)
		if !o.Removed {
			if curr, err = m.Bind(o.Curr); err != nil {
				return nil, err
			}
		}
		var prev any
		if o.HasPrev {
			if prev, err = m.Bind(o.Prev); err != nil {
				return nil, err
			}
		}
		return []any{txid, curr, prev}, nil
	case Transactional:
		tv, err := wire.ParseTransactional(val)
		if err != nil {
			return nil, fmt.Errorf("%w (transactional): %v", errLayout, err)
		}
		txid, err := txidColumn(tv.TxID)
		if err != nil {
			return nil, err
		}
		var v any // null: removed
		if !tv.Removed {
			if v, err = m.Bind(tv.Val); err != nil {
				return nil, err
			}
		}
		return []any{txid, v}, nil
	default: // NonTransactional
		pv, err := wire.ParsePlain(val)
		if err != nil {
			return nil, fmt.Errorf("%w (non-transactional): %v", errLayout, err)
		}
		var v any // null: removed
		if !pv.Removed {
			if v, err = m.Bind(pv.Val); err != nil {
				return nil, err
			}
		}
		return []any{v}, nil
	}
}

func txidColumn(txid uint64) (int64, error) {
	if txid > math.MaxInt64 {
		return 0, fmt.Errorf("%w: txid %d does not fit a bigint column", state.ErrBadValue, txid)
	}
	return int64(txid), nil
}

// newDests returns scan destinations for the value columns.
func (t TableSpec) newDests() []any {
	m := t.mapper()
	switch t.Layout {
	case Envelope:
		return []any{new([]byte)}
	case Opaque:
		return []any{new(*int64), m.NewDest(), m.NewDest()}
	case Transactional:
		return []any{new(*int64), m.NewDest()}
	default:
		return []any{m.NewDest()}
	}
}

// rebuild returns the stored envelope from scanned columns.
func (t TableSpec) rebuild(dests []any) ([]byte, error) {
	m := t.mapper()
	if t.Layout == Envelope {
		v := *dests[0].(*[]byte)
		if v == nil {
			v = []byte{}
		}
		return v, nil
	}
	// A null value column is a removed value: mappers refuse nil user
	// values, and the blob mapper stores an empty blob, never null.
	value := func(d any, col string) (v []byte, removed bool, err error) {
		v, null, err := m.Scanned(d)
		if err != nil {
			return nil, false, fmt.Errorf("column %s: %w", col, err)
		}
		return v, null, nil
	}
	txid := func(d any) (uint64, error) {
		p := *d.(**int64)
		if p == nil || *p < 0 {
			return 0, errors.New("column txid is null or negative")
		}
		return uint64(*p), nil
	}
	switch t.Layout {
	case Opaque:
		var (
			o   wire.Opaque
			err error
		)
		if o.TxID, err = txid(dests[0]); err != nil {
			return nil, err
		}
		if o.Curr, o.Removed, err = value(dests[1], "curr"); err != nil {
			return nil, err
		}
		prev, null, err := m.Scanned(dests[2])
		if err != nil {
			return nil, fmt.Errorf("column prev: %w", err)
		}
		o.Prev, o.HasPrev = prev, !null
		return wire.AppendOpaque(nil, o), nil
	case Transactional:
		var (
			tv  wire.Transactional
			err error
		)
		if tv.TxID, err = txid(dests[0]); err != nil {
			return nil, err
		}
		if tv.Val, tv.Removed, err = value(dests[1], "val"); err != nil {
			return nil, err
		}
		return wire.AppendTransactional(nil, tv), nil
	default:
		v, removed, err := value(dests[0], "val")
		if err != nil {
			return nil, err
		}
		return wire.AppendPlain(nil, wire.Plain{Val: v, Removed: removed}), nil
	}
}
