package ops

import (
	"errors"
	"strings"
	"testing"

	"github.com/squallstream/squall/failure"
)

func TestValueErrorText(t *testing.T) {
	long := strings.Repeat("é", 100)
	tests := []struct {
		value any
		want  string
	}{
		{"ten", `ops: Sum: field "amount" holds string "ten", want int64`},
		{long, `ops: Sum: field "amount" holds string "` + strings.Repeat("é", 64) + `"…, want int64`},
		{make([]int, 40), `ops: Sum: field "amount" holds []int [0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0…, want int64`},
		{nil, `ops: Sum: field "amount" holds nil, want int64`},
	}
	for _, tc := range tests {
		err := &ValueError{Op: "Sum", Field: "amount", Value: tc.value, Problem: "want int64"}
		checkErr(t, err, tc.want)
	}
}

func TestBadValueIsARejectionNotARetry(t *testing.T) {
	_, err := Sum[int64]("n").Init(tup("n", "x"))
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Op != "Sum" || ve.Field != "n" || ve.Value != "x" || ve.Problem != "want int64" {
		t.Fatalf("error %v: want a *ValueError with the op, field, value and problem", err)
	}
	if failure.IsRetryable(err) {
		t.Fatal("a bad value must not be retryable: the replay has the same value")
	}
	checkBadValue(t, err)
}
