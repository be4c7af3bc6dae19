package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/squallstream/squall/failure"
)

// fail returns the error of a failed etcd request of st made for op (a
// phrase such as `put meta of o/s/p txid 7`) under the caller's ctx: see
// classify.
func (st *Store) fail(ctx context.Context, op string, err error) error {
	return classify(ctx, op, err, st.timeout)
}

// classify returns the error of a failed etcd request made for op under
// the caller's ctx, bounded by timeout, marked as package failure says the runtime must treat it:
//
//   - the caller's context ended, the request timeout ran out, or etcd
//     cannot answer now (no leader, a leader change, a server-side
//     timeout, too many requests, a database that is full until an
//     operator compacts and defragments it, a lost or refused
//     connection, no endpoint): failure.Unavailable, so the runtime backs off and
//     replays without counting an attempt;
//   - an internal gRPC error: failure.Retryable;
//   - anything else (a request too large, a permission denied, a closed
//     client, a corrupt cluster): fatal, since replaying cannot fix it.
//
// The cause stays reachable through errors.Is and errors.As.
func classify(ctx context.Context, op string, err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("etcdstore: %s: %w", op, err)
	switch {
	case ctx.Err() != nil:
		if !errors.Is(err, ctx.Err()) {
			wrapped = fmt.Errorf("etcdstore: %s: %w (%w)", op, ctx.Err(), err)
		}
		return failure.Unavailable(wrapped)
	case errors.Is(err, context.DeadlineExceeded):
		return failure.Unavailable(fmt.Errorf("etcdstore: %s: no answer from etcd within %v: %w", op, timeout, err))
	case unavailable(err):
		return failure.Unavailable(wrapped)
	case grpcCode(err) == codes.Internal:
		return failure.Retryable(wrapped)
	}
	return wrapped
}

// unavailable reports whether err says that etcd cannot answer now but
// may later.
func unavailable(err error) bool {
	switch grpcCode(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return true
	}
	var netErr net.Error
	return errors.Is(err, rpctypes.ErrNotLeader) || errors.Is(err, clientv3.ErrNoAvailableEndpoints) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &netErr)
}

// grpcCode returns the gRPC status code of err: the code of an etcd
// server error, of a gRPC status, or codes.Unknown.
func grpcCode(err error) codes.Code {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code()
	}
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return codes.Unknown
}
