package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
)

// DefaultPrefix is where New keeps its keys when given an empty prefix.
const DefaultPrefix = "/squall/coordination"

// DefaultRequestTimeout bounds each etcd request of a store whose
// Options.RequestTimeout is zero.
const DefaultRequestTimeout = 10 * time.Second

// acquireAttempts bounds the compare-and-sets of one Acquire that lose to
// concurrent Acquires of the same owner (each loss means another one won).
const acquireAttempts = 64

// Options configures a store. The zero value is valid.
type Options struct {
	// RequestTimeout bounds every etcd request the store makes, whatever
	// the caller's context allows: etcd's client waits for a connection
	// rather than failing, so without a bound a call to an unreachable
	// cluster would block as long as the caller's context lives. A request
	// that runs out of it fails with a retryable error marked
	// failure.Unavailable. Zero means DefaultRequestTimeout; it must not
	// be negative.
	RequestTimeout time.Duration
}

// Validate reports options New refuses. Every error matches
// coordstore.ErrInvalid.
func (o Options) Validate() error {
	if o.RequestTimeout < 0 {
		return fmt.Errorf("%w: etcdstore: negative RequestTimeout %v", coordstore.ErrInvalid, o.RequestTimeout)
	}
	return nil
}

// validatePrefix reports a prefix New refuses.
func validatePrefix(prefix string) error {
	if strings.HasSuffix(prefix, "/") {
		return fmt.Errorf("%w: etcdstore: prefix %q ends with '/' (the store adds the separator)", coordstore.ErrInvalid, prefix)
	}
	return nil
}

// Store is a coordstore.Store in etcd. It is safe for concurrent use.
type Store struct {
	cli     *clientv3.Client
	owned   bool // Close closes cli
	prefix  string
	timeout time.Duration

	mu     sync.RWMutex // write-locked by Close; read-locked by every call
	closed bool
}

var _ coordstore.Store = (*Store)(nil)

// New returns a store keeping its keys under prefix (DefaultPrefix if
// empty) in the etcd cluster of cli. The client stays the caller's: the
// store's Close leaves it open, and the caller closes it after the store.
// Two stores whose prefixes are equal share their data; a prefix must not
// be nested in another store's (such as "/a" and "/a/b"), nor end with
// '/'.
func New(cli *clientv3.Client, prefix string, opts Options) (*Store, error) {
	if cli == nil {
		return nil, fmt.Errorf("%w: etcdstore: nil client", coordstore.ErrInvalid)
	}
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	timeout := opts.RequestTimeout
	if timeout == 0 {
		timeout = DefaultRequestTimeout
	}
	return &Store{cli: cli, prefix: prefix, timeout: timeout}, nil
}

// Dial connects a client with cfg and returns a store over it, as New
// does. The store owns this client: Close closes it. etcd's client
// connects lazily, so an unreachable cluster shows in the first calls'
// errors (retryable), not here.
func Dial(cfg clientv3.Config, prefix string, opts Options) (*Store, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("%w: etcdstore: no endpoints to dial", coordstore.ErrInvalid)
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, classify(context.Background(), fmt.Sprintf("connect to %v", cfg.Endpoints), err, cfg.DialTimeout)
	}
	st, err := New(cli, prefix, opts)
	if err != nil {
		cli.Close()
		return nil, err
	}
	st.owned = true
	return st, nil
}

// Prefix returns the prefix the store keeps its keys under.
func (st *Store) Prefix() string { return st.prefix }

// Close implements coordstore.Store. It waits for calls in progress, then
// closes the client if Dial created it; a client given to New stays open.
func (st *Store) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil
	}
	st.closed = true
	if st.owned {
		if err := st.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("etcdstore: close client: %w", err)
		}
	}
	return nil
}

// begin checks ctx and that the store is open; end must be called after.
// A context that ended is an error marked failure.Unavailable, like one
// that ends during a request (see classify).
func (st *Store) begin(ctx context.Context) (end func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, failure.Unavailable(fmt.Errorf("etcdstore: %w", err))
	}
	st.mu.RLock()
	if st.closed {
		st.mu.RUnlock()
		return nil, coordstore.ErrClosed
	}
	return st.mu.RUnlock, nil
}

// get runs one Get of key with opts, bounded by the request timeout.
func (st *Store) get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	rctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	return st.cli.Get(rctx, key, opts...)
}

// txn runs one transaction, bounded by the request timeout: if every cmp
// holds, the then ops, else the els ops.
func (st *Store) txn(ctx context.Context, cmp []clientv3.Cmp, then, els []clientv3.Op) (*clientv3.TxnResponse, error) {
	rctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	return st.cli.Txn(rctx).If(cmp...).Then(then...).Else(els...).Commit()
}
