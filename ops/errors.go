package ops

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/squallstream/squall/trident"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrBadValue: a tuple value has a type or a value the operation
	// cannot use. Matched by *ValueError.
	ErrBadValue = errors.New("ops: bad value")
	// ErrNoField: a tuple lacks a field the operation reads. Matched by
	// *FieldError.
	ErrNoField = errors.New("ops: no such field")
	// ErrNotTupleCollection: TupleCollectionGet queried state that cannot
	// list its content (it is not a TupleCollection).
	ErrNotTupleCollection = errors.New("ops: TupleCollectionGet: the state is not a tuple collection")
)

// ValueError is a tuple value an operation cannot use. Operations return
// it as a rejection of the tuple (trident.Reject), never as a retryable
// failure: the same tuple would fail again on replay. See the package
// documentation.
type ValueError struct {
	Op    string // the operation, such as "Sum"
	Field string // the field that holds the value
	Value any    // the value
	// Problem says what is wrong, such as "want int64" or "which is out
	// of range of int32".
	Problem string
}

// Error returns, for example,
// `ops: Sum: field "amount" holds string "ten", want int64`.
func (e *ValueError) Error() string {
	if e.Value == nil {
		return fmt.Sprintf("ops: %s: field %q holds nil, %s", e.Op, e.Field, e.Problem)
	}
	return fmt.Sprintf("ops: %s: field %q holds %T %s, %s", e.Op, e.Field, e.Value, formatValue(e.Value), e.Problem)
}

// Is matches ErrBadValue.
func (e *ValueError) Is(target error) bool { return target == ErrBadValue }

// FieldError is a tuple without a field an operation reads: the operation
// was given the wrong input fields. It is fatal.
type FieldError struct {
	Op     string
	Field  string
	Fields trident.Fields // the fields the tuple has
}

// Error returns, for example,
// `ops: Sum: tuple with fields [word] has no field "amount"`.
func (e *FieldError) Error() string {
	return fmt.Sprintf("ops: %s: tuple with fields %v has no field %q", e.Op, e.Fields, e.Field)
}

// Is matches ErrNoField.
func (e *FieldError) Is(target error) bool { return target == ErrNoField }

// lookup returns the named value of t, or a *FieldError.
func lookup(op string, t trident.Tuple, field string) (any, error) {
	v, ok := t.Lookup(field)
	if !ok {
		return nil, &FieldError{Op: op, Field: field, Fields: t.Fields()}
	}
	return v, nil
}

// maxValueLen bounds how much of a value an error message shows.
const maxValueLen = 64

// formatValue formats v for an error message: strings quoted, everything
// cut to maxValueLen runes.
func formatValue(v any) string {
	if str, ok := v.(string); ok {
		if utf8.RuneCountInString(str) > maxValueLen {
			return fmt.Sprintf("%q…", string([]rune(str)[:maxValueLen]))
		}
		return fmt.Sprintf("%q", str)
	}
	s := fmt.Sprint(v)
	if utf8.RuneCountInString(s) > maxValueLen {
		return string([]rune(s)[:maxValueLen]) + "…"
	}
	return s
}

// badValue returns e as a rejection of the tuple (trident.Reject): the
// runtime sends the tuple to the dead letters and goes on, or stops the
// worker when there are none. A string value is boxed anew, so that the
// error keeps nothing of a tuple the runtime lent (trident.TupleBorrower).
func badValue(e *ValueError) error {
	if s, ok := e.Value.(string); ok {
		e.Value = s
	}
	return trident.Reject(e)
}
