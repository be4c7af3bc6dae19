package ops

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/squallstream/squall/trident"
)

// recorder is a trident.Collector that records what it is given.
type recorder struct {
	mu      sync.Mutex
	emitted [][]any
	errs    []error
}

func (r *recorder) Emit(values ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emitted = append(r.emitted, slices.Clone(values))
}

func (r *recorder) ReportError(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// tup builds a tuple; fields are space-separated.
func tup(fields string, values ...any) trident.Tuple {
	return trident.NewTuple(strings.Fields(fields), values...)
}

// fold aggregates tuples as a partition would: Init each, Combine from
// Zero.
func fold[V any](agg trident.CombinerAggregator[V], tuples ...trident.Tuple) (V, error) {
	acc := agg.Zero()
	for _, t := range tuples {
		v, err := agg.Init(t)
		if err != nil {
			return acc, err
		}
		acc = agg.Combine(acc, v)
	}
	return acc, nil
}

// checkErr fails t unless err's text is want ("" means no error).
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("error %v, want none", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want %q", want)
	case want != "" && err.Error() != want:
		t.Fatalf("error\n  %v\nwant\n  %s", err, want)
	}
}

// checkBadValue fails t unless err is a rejected *ValueError.
func checkBadValue(t *testing.T, err error) {
	t.Helper()
	var ve *ValueError
	if !errors.Is(err, ErrBadValue) || !errors.As(err, &ve) {
		t.Fatalf("error %v does not match ErrBadValue", err)
	}
	if !strings.HasPrefix(err.Error(), "trident: tuple rejected: ") {
		t.Fatalf("error %v is not a rejection", err)
	}
}

func ptr[V any](v V) *V { return &v }

// tuplesOf returns one tuple per value, with the one field.
func tuplesOf(field string, values []any) []trident.Tuple {
	out := make([]trident.Tuple, len(values))
	for i, v := range values {
		out[i] = tup(field, v)
	}
	return out
}

func equalPtr[V comparable](a, b *V) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func show[V any](p *V) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
