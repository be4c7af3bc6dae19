package cassandra

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
)

// reqErr is a server error frame as gocql returns it (gocql.RequestError).
type reqErr struct{ code int }

func (e reqErr) Code() int       { return e.code }
func (e reqErr) Message() string { return fmt.Sprintf("code %#x", e.code) }
func (e reqErr) Error() string   { return e.Message() }

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err         error
		retryable   bool
		unavailable bool
	}{
		{reqErr{gocql.ErrCodeUnavailable}, true, true},
		{reqErr{gocql.ErrCodeOverloaded}, true, true},
		{reqErr{gocql.ErrCodeWriteTimeout}, true, true},
		{reqErr{gocql.ErrCodeReadTimeout}, true, true},
		{reqErr{gocql.ErrCodeCASWriteUnknown}, true, false},
		{reqErr{gocql.ErrCodeReadFailure}, true, false},
		{reqErr{gocql.ErrCodeServer}, true, false},
		{reqErr{gocql.ErrCodeSyntax}, false, false},
		{reqErr{gocql.ErrCodeInvalid}, false, false},
		{reqErr{gocql.ErrCodeUnauthorized}, false, false},
		{reqErr{gocql.ErrCodeCredentials}, false, false},
		{gocql.ErrTimeoutNoResponse, true, true},
		{gocql.ErrNoConnections, true, true},
		{gocql.ErrConnectionClosed, true, true},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), true, true},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true, true},
		{state.ErrBadKey, false, false},
	} {
		op := &OpError{Table: "ks.t", Op: "put", Keys: 10, Failed: 1, Key: state.MustKey("k"), Err: tc.err}
		if got := failure.IsRetryable(Classify(op)); got != tc.retryable {
			t.Errorf("Classify(%v): retryable = %v, want %v", op, got, tc.retryable)
		}
		if got := failure.IsUnavailable(Classify(op)); got != tc.unavailable {
			t.Errorf("Classify(%v): unavailable = %v, want %v", op, got, tc.unavailable)
		}
	}
}

func TestDescribeStartErrors(t *testing.T) {
	if err := describe("connect", reqErr{gocql.ErrCodeCredentials}); !strings.Contains(err.Error(), "check Username and Password") ||
		failure.IsRetryable(err) {
		t.Errorf("bad credentials: %v", err)
	}
	if err := describe("create table", reqErr{gocql.ErrCodeSyntax}); !errors.Is(err, ErrSchema) || failure.IsRetryable(err) {
		t.Errorf("syntax error: %v", err)
	}
	if err := describe("connect", gocql.ErrNoConnectionsStarted); !failure.IsRetryable(err) {
		t.Errorf("no connections: %v, want retryable", err)
	}
}

// TestConnectUnreachable: no host answers: Connect fails at once with a
// retryable error naming the hosts.
func TestConnectUnreachable(t *testing.T) {
	start := time.Now()
	_, err := Connect(t.Context(), Config{Hosts: []string{"127.0.0.1:1"}, Keyspace: "k", ConnectTimeout: time.Second})
	if err == nil || !failure.IsRetryable(err) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Connect to a closed port: %v, want a retryable error naming the host", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Connect took %v", d)
	}
}

func TestFenceTimestamps(t *testing.T) {
	old, cur := &fence{epoch: 1}, &fence{epoch: 2}
	var prev int64
	for range 3 {
		ts, err := old.next()
		if err != nil || ts <= prev {
			t.Fatalf("old fence: %d after %d, %v", ts, prev, err)
		}
		prev = ts
	}
	first, _ := cur.next()
	if first <= prev || first <= time.Now().UnixMicro() {
		t.Errorf("epoch 2's first timestamp %d is not above epoch 1's last %d and the wall clock", first, prev)
	}
	cur.seq.Store(maxSeq)
	if _, err := cur.next(); !errors.Is(err, ErrFenceExhausted) {
		t.Errorf("after %d puts: %v, want ErrFenceExhausted", maxSeq, err)
	}
}
