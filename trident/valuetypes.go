package trident

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/squallstream/squall/transport"
	"github.com/squallstream/squall/trident/internal/runtime"
)

// MinValueTypeID is the smallest id ValueType accepts; smaller ones are
// Trident's own.
const MinValueTypeID = runtime.MinUserExtID

// ValueType declares T, a type of the values the topology's operations
// emit (or of an aggregator's partial values), so that they cross worker
// processes when the topology runs across several (RunShare; cluster mode
// with more than one worker): enc appends the encoding of a value to b;
// dec decodes one from data, which it must not keep, and must fail rather
// than panic on bad data. id, from MinValueTypeID to 127, names the type
// on the wire: every process of the topology must declare the same types
// under the same ids. The transport's built-in types (booleans, numbers,
// strings, []byte, time.Time, []any, map[string]any) need no
// declaration, and neither does a topology that runs in one process. A
// value of an undeclared type cannot leave its worker: the error is
// reported (Running.Errors) and its batch fails.
func ValueType[T any](t *Topology, id int8, enc func(b []byte, v T) ([]byte, error), dec func(data []byte) (T, error)) {
	if id < MinValueTypeID {
		t.errs = append(t.errs, fmt.Errorf("trident: value type %T: id %d is Trident's own; use %d to 127", *new(T), id, MinValueTypeID))
		return
	}
	t.types = append(t.types, func(ts *transport.Types) error { return transport.Register(ts, id, enc, dec) })
}

// JSONValueType is ValueType with encoding/json as the encoding: T's
// exported fields cross, as json.Marshal writes them.
func JSONValueType[T any](t *Topology, id int8) {
	ValueType(t, id, func(b []byte, v T) ([]byte, error) {
		data, err := json.Marshal(v)
		return append(b, data...), err
	}, func(data []byte) (T, error) {
		var v T
		err := json.Unmarshal(data, &v)
		return v, err
	})
}

// registerValueTypes registers the declared value types in ts.
func (t *Topology) registerValueTypes(ts *transport.Types) error {
	var errs []error
	for _, register := range t.types {
		errs = append(errs, register(ts))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("trident: declaring value types: %w", err)
	}
	return nil
}
