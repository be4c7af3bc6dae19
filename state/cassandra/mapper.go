package cassandra

import (
	"errors"
	"fmt"

	"github.com/squallstream/squall/state"
)

// Mapper stores user values as a typed CQL column instead of a msgpack
// blob, so the table can be read with CQL directly (a count as bigint, a
// name as text). It converts between the msgpack encoding of one user
// value, as the map flavours hold it, and a value gocql binds and scans.
type Mapper interface {
	// CQLType is the column type, for example "bigint".
	CQLType() string
	// Bind converts one msgpack value to a value gocql can bind for the
	// column. A mapper may refuse a value (for example nil).
	Bind(msgpack []byte) (any, error)
	// NewDest returns a pointer gocql can scan the column into, able to
	// tell a null column (for example a **int64).
	NewDest() any
	// Scanned returns the msgpack encoding of what was scanned into dest,
	// or null true for a null column.
	Scanned(dest any) (msgpack []byte, null bool, err error)
}

// errNilValue is returned by typed mappers for a nil user value: a null
// column means an absent prev, so a nil value cannot be stored.
var errNilValue = errors.New("a typed column cannot hold a nil value")

// Typed returns a Mapper for user values of type T in a column of the
// given CQL type, converting with msgpack on one side (state.Msgpack[T])
// and gocql's marshalling of T on the other: Typed[int64]("bigint"),
// Typed[float64]("double"), Typed[string]("text"). Nil values are refused
// with state.ErrBadValue.
func Typed[T any](cqlType string) Mapper { return typed[T]{typ: cqlType} }

type typed[T any] struct{ typ string }

func (m typed[T]) CQLType() string { return m.typ }

func (m typed[T]) Bind(raw []byte) (any, error) {
	if len(raw) == 1 && raw[0] == 0xc0 { // msgpack nil
		return nil, fmt.Errorf("%w: %v", state.ErrBadValue, errNilValue)
	}
	v, err := state.Msgpack[T]{}.Unmarshal(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: value for a %s column: %v", state.ErrBadValue, m.typ, err)
	}
	return v, nil
}

func (m typed[T]) NewDest() any { return new(*T) }

func (m typed[T]) Scanned(dest any) ([]byte, bool, error) {
	p, ok := dest.(**T)
	if !ok {
		return nil, false, fmt.Errorf("cassandra: mapper for %s scanned into %T", m.typ, dest)
	}
	if *p == nil {
		return nil, true, nil
	}
	b, err := state.Msgpack[T]{}.Marshal(**p)
	return b, false, err
}

// blobMapper keeps msgpack bytes as they are in a blob column.
type blobMapper struct{}

func (blobMapper) CQLType() string { return "blob" }

func (blobMapper) Bind(raw []byte) (any, error) {
	if raw == nil {
		return []byte{}, nil // an empty blob, not null
	}
	return raw, nil
}

func (blobMapper) NewDest() any { return new([]byte) }

func (blobMapper) Scanned(dest any) ([]byte, bool, error) {
	b := *dest.(*[]byte)
	return b, b == nil, nil
}
