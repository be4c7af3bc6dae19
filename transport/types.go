package transport

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"time"
)

// Types is a set of value types outside the built-in set (see the package
// comment), each carried as a msgpack extension with an id of its own:
// the way Trident's coordination values (attempts, batch announcements)
// cross processes. Both ends of a connection must register the same types
// under the same ids. The zero Types is empty and ready to use; register
// every type before the Types is given to a Client or Server, which only
// read it.
type Types struct {
	byType map[reflect.Type]*extType
	byID   map[int8]*extType
}

// MinExtID is the smallest extension id Register accepts; ids below it
// are the transport's own (1 carries the sized integers).
const MinExtID = 16

type extType struct {
	id  int8
	typ reflect.Type
	enc func(b []byte, v any) ([]byte, error)
	dec func(data []byte) (any, error)
}

// Register adds type T under extension id (MinExtID to 127). enc appends
// the encoding of a value to b; dec decodes one from data, which it must
// not keep (copy what it needs), and must fail rather than panic on bad
// data. A dec that panics all the same is recovered: the frame is
// rejected (ErrValuePanic), its connection closed, and the process lives
// on. Register fails for an id or a type that is already registered, a
// reserved id, or a type of the built-in set.
func Register[T any](ts *Types, id int8, enc func(b []byte, v T) ([]byte, error), dec func(data []byte) (T, error)) error {
	typ := reflect.TypeFor[T]()
	if id < MinExtID {
		return fmt.Errorf("%w: extension id %d for %v is reserved (use %d to 127)", ErrInvalidConfig, id, typ, MinExtID)
	}
	if builtin(typ) {
		return fmt.Errorf("%w: %v is carried natively and cannot be registered", ErrInvalidConfig, typ)
	}
	if ts.byType == nil {
		ts.byType, ts.byID = map[reflect.Type]*extType{}, map[int8]*extType{}
	}
	if o := ts.byID[id]; o != nil {
		return fmt.Errorf("%w: extension id %d is taken by %v", ErrInvalidConfig, id, o.typ)
	}
	if o := ts.byType[typ]; o != nil {
		return fmt.Errorf("%w: %v is registered already, as %d", ErrInvalidConfig, typ, o.id)
	}
	t := &extType{id: id, typ: typ,
		enc: func(b []byte, v any) ([]byte, error) { return enc(b, v.(T)) },
		dec: func(data []byte) (v any, err error) {
			defer func() {
				if p := recover(); p != nil {
					v, err = nil, &valuePanic{typ: typ, value: p, stack: debug.Stack()}
				}
			}()
			return dec(data)
		},
	}
	ts.byType[typ], ts.byID[id] = t, t
	return nil
}

func (ts *Types) lookupType(t reflect.Type) *extType {
	if ts == nil {
		return nil
	}
	return ts.byType[t]
}

func (ts *Types) lookupID(id int8) *extType {
	if ts == nil {
		return nil
	}
	return ts.byID[id]
}

func builtin(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[any](), reflect.TypeFor[[]any](), reflect.TypeFor[map[string]any](),
		reflect.TypeFor[[]byte](), reflect.TypeFor[string](), reflect.TypeFor[bool](),
		reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[time.Time]():
		return true
	}
	_, sized := sizedTag(reflect.Zero(t).Interface())
	return sized || t == reflect.TypeFor[int]()
}

// valuePanic is a panic recovered from a registered type's decoder.
type valuePanic struct {
	typ   reflect.Type
	value any
	stack []byte // where it panicked, for the log
}

func (e *valuePanic) Error() string {
	return fmt.Sprintf("%v: decoding a %v: %v", ErrValuePanic, e.typ, e.value)
}

func (e *valuePanic) Unwrap() error { return ErrValuePanic }
