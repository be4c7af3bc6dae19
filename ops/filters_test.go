package ops

import (
	"context"
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident"
)

func TestEquals(t *testing.T) {
	var nilPtr *int
	tests := []struct {
		name   string
		fields []string
		tuple  trident.Tuple
		want   bool
	}{
		{"named fields equal", []string{"a", "b"}, tup("a b c", 1, 1, 2), true},
		{"named fields differ", []string{"a", "c"}, tup("a b c", 1, 1, 2), false},
		{"three named fields", []string{"a", "b", "c"}, tup("a b c", "x", "x", "x"), true},
		{"last of three differs", []string{"a", "b", "c"}, tup("a b c", "x", "x", "y"), false},
		{"all values when no fields", nil, tup("a b c", 7, 7, 7), true},
		{"all values differ", nil, tup("a b c", 7, 7, 8), false},
		{"one field", []string{"b"}, tup("a b", 1, 2), true},
		{"one value", nil, tup("a", 1), true},
		{"numbers across types", nil, tup("a b c", 3, uint8(3), 3.0), true},
		{"number and string", nil, tup("a b", 3, "3"), false},
		{"nil and nil", nil, tup("a b", nil, nil), true},
		{"nil and value", nil, tup("a b", nil, 0), false},
		{"typed nil pointer is not nil", nil, tup("a b", nilPtr, nil), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Equals(tc.fields...).Keep(context.Background(), tc.tuple)
			if err != nil || got != tc.want {
				t.Fatalf("Keep = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestFilterNull(t *testing.T) {
	var nilPtr *string
	s := "s"
	tests := []struct {
		name   string
		fields []string
		tuple  trident.Tuple
		want   bool
	}{
		{"no nil", []string{"a", "b"}, tup("a b", 1, "x"), true},
		{"named field nil", []string{"a", "b"}, tup("a b", 1, nil), false},
		{"nil outside the named fields", []string{"a"}, tup("a b", 1, nil), true},
		{"any value when no fields", nil, tup("a b c", 1, 2, nil), false},
		{"no nil anywhere", nil, tup("a b c", 1, 2, 3), true},
		{"nil pointer", []string{"a"}, tup("a", nilPtr), false},
		{"non-nil pointer", []string{"a"}, tup("a", &s), true},
		{"zero values are not nil", nil, tup("a b c", 0, "", false), true},
		{"empty tuple", nil, tup(""), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FilterNull(tc.fields...).Keep(context.Background(), tc.tuple)
			if err != nil || got != tc.want {
				t.Fatalf("Keep = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

var errFilter = errors.New("filter failed")

func TestNegate(t *testing.T) {
	fixed := func(keep bool, err error) trident.Filter {
		return trident.FilterFunc(func(context.Context, trident.Tuple) (bool, error) { return keep, err })
	}
	tests := []struct {
		name    string
		inner   trident.Filter
		want    bool
		wantErr error
	}{
		{"keep becomes drop", fixed(true, nil), false, nil},
		{"drop becomes keep", fixed(false, nil), true, nil},
		{"errors pass through", fixed(true, failure.Retryable(errFilter)), false, errFilter},
		{"double negation", Negate(fixed(true, nil)), true, nil},
		{"negated FilterNull keeps tuples with nil", FilterNull("a"), true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Negate(tc.inner).Keep(context.Background(), tup("a", nil))
			if got != tc.want || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Keep = %v, %v; want %v, %v", got, err, tc.want, tc.wantErr)
			}
			if tc.wantErr != nil && !failure.IsRetryable(err) {
				t.Fatalf("error %v lost its failure kind", err)
			}
		})
	}
}

func TestFilterMissingField(t *testing.T) {
	for _, tc := range []struct {
		f    trident.Filter
		want string
	}{
		// The missing field is reported even when an earlier field
		// already decides the outcome.
		{Equals("a", "b", "z"), `ops: Equals: tuple with fields [a b] has no field "z"`},
		{FilterNull("a", "z"), `ops: FilterNull: tuple with fields [a b] has no field "z"`},
	} {
		_, err := tc.f.Keep(context.Background(), tup("a b", nil, 1))
		checkErr(t, err, tc.want)
		if !errors.Is(err, ErrNoField) || failure.IsRetryable(err) {
			t.Fatalf("%v: want a fatal ErrNoField", err)
		}
	}
}

func TestConstructorsPanicOnNil(t *testing.T) {
	for name, f := range map[string]func(){
		"Negate":   func() { Negate(nil) },
		"Debug":    func() { Debug("x", nil) },
		"DebugLog": func() { DebugLog("x", nil) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			f()
		})
	}
}
