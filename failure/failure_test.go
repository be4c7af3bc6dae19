package failure

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestKinds(t *testing.T) {
	cases := []struct {
		name      string
		err       error
		retryable bool
		reported  bool
		kind      Kind
	}{
		{"nil", nil, false, false, Fatal},
		{"plain", io.EOF, false, false, Fatal},
		{"retryable", Retryable(io.EOF), true, false, Retry},
		{"reported", Reported(io.EOF), true, true, Report},
		{"wrapped retryable", fmt.Errorf("ctx: %w", Retryable(io.EOF)), true, false, Retry},
		{"wrapped reported", fmt.Errorf("ctx: %w", Reported(io.EOF)), true, true, Report},
		{"unavailable", Unavailable(io.EOF), true, false, Outage},
		{"wrapped unavailable", fmt.Errorf("ctx: %w", Unavailable(io.EOF)), true, false, Outage},
		{"reported unavailable", Reported(Unavailable(io.EOF)), true, true, Report},
	}
	for _, c := range cases {
		if got := IsRetryable(c.err); got != c.retryable {
			t.Errorf("%s: IsRetryable = %v, want %v", c.name, got, c.retryable)
		}
		if got := IsReported(c.err); got != c.reported {
			t.Errorf("%s: IsReported = %v, want %v", c.name, got, c.reported)
		}
		if got, want := IsUnavailable(c.err), c.kind == Outage; got != want {
			t.Errorf("%s: IsUnavailable = %v, want %v", c.name, got, want)
		}
		if got := KindOf(c.err); got != c.kind {
			t.Errorf("%s: KindOf = %v, want %v", c.name, got, c.kind)
		}
	}
}

func TestWrappersKeepCauseAndNil(t *testing.T) {
	if Retryable(nil) != nil || Reported(nil) != nil || Unavailable(nil) != nil {
		t.Fatal("wrapping nil must give nil")
	}
	err := Reported(io.ErrUnexpectedEOF)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal("cause not reachable through errors.Is")
	}
	if err.Error() != io.ErrUnexpectedEOF.Error() {
		t.Fatalf("message = %q", err.Error())
	}
}
