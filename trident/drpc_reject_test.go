package trident

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/drpc"
)

var errNotAnInteger = errors.New("not an integer")

// TestDRPCRejectAnswersAnError: a tuple of a DRPC request that an
// operation rejects ends the request with drpc.ErrRejected naming the
// cause (HTTP 422 "rejected"), instead of a result computed without it;
// the letter is still written and the next requests are answered.
func TestDRPCRejectAnswersAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		tt := NewTopology("drpc-reject")
		parsed := tt.NewDRPCStream("double", server).Map(MapFunctionFunc(func(_ context.Context, tu Tuple) ([]any, error) {
			var n int64
			if _, err := fmt.Sscan(tu.String("args"), &n); err != nil {
				return nil, Reject(fmt.Errorf("%w: %q", errNotAnInteger, tu.String("args")))
			}
			return []any{2 * n}, nil
		}), "n")
		ReturnResults(Aggregate(parsed, Fields{"n"}, Combining[int64](sumField{}), "sum"), "double", "sum")
		letters := &MemoryDeadLetters{}
		submit(t, tt, Config{DeadLetters: letters})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()

		_, err := server.Execute(ctx, "double", "seven", 0)
		if !errors.Is(err, drpc.ErrRejected) || !errors.Is(err, errNotAnInteger) || !strings.Contains(err.Error(), `"seven"`) {
			t.Fatalf("double(seven) = %v, want ErrRejected naming the cause", err)
		}
		if n := len(letters.Letters()); n != 1 {
			t.Fatalf("%d dead letters, want 1", n)
		}
		res, err := server.Execute(ctx, "double", "21", 0)
		if err != nil || fmt.Sprint(res.Rows) != "[[42]]" {
			t.Fatalf("double(21) = %v, %v", res.Rows, err)
		}

		h := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/drpc/double", strings.NewReader("x"))
		server.Handler().ServeHTTP(h, req)
		if h.Code != http.StatusUnprocessableEntity || !strings.Contains(h.Body.String(), `"rejected"`) || !strings.Contains(h.Body.String(), "not an integer") {
			t.Fatalf("HTTP answer %d %s, want 422 rejected naming the cause", h.Code, h.Body)
		}
	})
}
