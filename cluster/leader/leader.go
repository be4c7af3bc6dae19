// Package leader elects one nimbus among many through etcd and fences
// every write of the leader, so that a deposed leader cannot write.
//
// Every Candidate campaigns with a concurrency.Session (a lease of
// Config.TTL, kept alive while the process runs) and a concurrency.Election
// on Config.Prefix. The seed rule: a candidate joins the election only when
// Config.Ready says it holds the code of every active topology, checks again
// when it wins, and resigns if something went missing meanwhile.
//
// Fencing: the leader's election key was created at revision Rev(). It
// lives exactly as long as the leadership: it is deleted when the leader
// resigns or its lease expires (a crashed, partitioned or paused process),
// and a new leader's key has a later revision. Leadership.Write therefore
// commits its operations in one etcd transaction guarded by
// CreateRevision(key) == Rev(); once the key is gone, or is another
// campaign's, the guard fails and Write returns ErrDeposed without writing.
// Write does not consult local state first: etcd's answer is the only one
// that counts, since a paused process cannot know how long it was paused.
//
// Ordering contract: every write that only the leader may make goes
// through Leadership.Write (or a transaction carrying Leadership.Guard()).
package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/internal/notify"
)

// ErrNotLeader is matched (errors.Is) by a *NotLeaderError.
var ErrNotLeader = errors.New("leader: not the leader")

// ErrDeposed is returned by Leadership.Write when the leadership it was
// made with has ended: nothing was written.
var ErrDeposed = errors.New("leader: deposed, write rejected")

// NotLeaderError is what a non-leader answers a leader-only request with.
type NotLeaderError struct {
	// Leader is the ID of the current leader, or "" if there is none.
	Leader string
}

func (e *NotLeaderError) Error() string {
	if e.Leader == "" {
		return "leader: not the leader, and no leader is elected right now"
	}
	return "leader: not the leader; the leader is " + e.Leader
}

// Is makes errors.Is(err, ErrNotLeader) hold.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// Defaults of the zero Config.
const (
	DefaultTTL        = 10 * time.Second
	DefaultReadyRetry = time.Second
)

// Config of a Candidate.
type Config struct {
	// Client reaches etcd (required).
	Client *clientv3.Client
	// Prefix of the election keys, e.g. "/squall/nimbus/leader" (required).
	Prefix string
	// ID names this candidate; it is the value of its election key, what
	// a NotLeaderError reports (required; e.g. its HTTP address).
	ID string
	// TTL of the session lease (default 10s, rounded up to whole seconds,
	// at least 1s): a leader that stops renewing it is deposed within TTL.
	TTL time.Duration
	// Ready is the seed rule: nil when this candidate may lead (it holds
	// the code of every active topology), else an error saying what is
	// missing. nil Ready means always ready.
	Ready func(ctx context.Context) error
	// Wake, if set, returns a channel that is closed when Ready's answer
	// may have changed (e.g. notify.Signal.Wait); a candidate that is not
	// ready checks again then, or after ReadyRetry (default 1s).
	Wake       func() <-chan struct{}
	ReadyRetry time.Duration
	// Clock times the retries (nil: the system clock).
	Clock clock.Clock
	// Logger (nil: slog.Default()).
	Logger *slog.Logger
}

// Validate reports a Config that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Client == nil:
		return errors.New("leader: Config.Client is required")
	case c.Prefix == "":
		return errors.New("leader: Config.Prefix is required")
	case c.ID == "":
		return errors.New("leader: Config.ID is required")
	case c.TTL < 0 || c.ReadyRetry < 0:
		return errors.New("leader: negative duration in Config")
	}
	return nil
}

// Candidate campaigns for leadership while Run runs.
type Candidate struct {
	cfg    Config
	ttl    int
	log    *slog.Logger
	clock  clock.Clock
	change notify.Signal

	mu      sync.Mutex
	current *Leadership
	running bool
}

// New returns a Candidate; call Run to campaign.
func New(cfg Config) (*Candidate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.ReadyRetry == 0 {
		cfg.ReadyRetry = DefaultReadyRetry
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Candidate{
		cfg:   cfg,
		ttl:   max(1, int(math.Ceil(cfg.TTL.Seconds()))),
		log:   cfg.Logger.With("candidate", cfg.ID),
		clock: clock.Or(cfg.Clock),
	}, nil
}

// Changed returns a channel closed at the next change of leadership of this
// candidate (won or lost).
func (c *Candidate) Changed() <-chan struct{} { return c.change.Wait() }

// Current returns the leadership this candidate holds, or nil.
func (c *Candidate) Current() *Leadership {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// Leadership returns the leadership this candidate holds, for a leader-only
// request; otherwise a *NotLeaderError naming the current leader.
func (c *Candidate) Leadership(ctx context.Context) (*Leadership, error) {
	if l := c.Current(); l != nil {
		return l, nil
	}
	id, err := LeaderID(ctx, c.cfg.Client, c.cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("leader: not the leader, and looking the leader up failed: %w", err)
	}
	return nil, &NotLeaderError{Leader: id}
}

// LeaderID returns the ID of the leader elected on prefix, or "".
func LeaderID(ctx context.Context, cli *clientv3.Client, prefix string) (string, error) {
	resp, err := cli.Get(ctx, prefix+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return "", err
	}
	if len(resp.Kvs) == 0 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}

// Run campaigns until ctx is done, then resigns any leadership it holds and
// returns ctx's error. A Candidate runs at most once at a time.
func (c *Candidate) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return errors.New("leader: Run called twice")
	}
	c.running = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
	}()

	retry := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(5*time.Second))}
	for ctx.Err() == nil {
		if !c.waitReady(ctx) {
			break
		}
		if err := c.term(ctx); err != nil && ctx.Err() == nil {
			d := time.Duration(retry.Next())
			c.log.Warn("leader: campaign failed; retrying", "err", err, "failures", retry.Failures(), "in", d)
			c.sleep(ctx, d)
			continue
		}
		retry.Reset()
	}
	return ctx.Err()
}

// waitReady returns once Ready holds (true) or ctx is done (false).
func (c *Candidate) waitReady(ctx context.Context) bool {
	logged := false
	for {
		var wake <-chan struct{}
		if c.cfg.Wake != nil {
			wake = c.cfg.Wake()
		}
		err := c.ready(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if !logged {
			c.log.Info("leader: not campaigning until ready", "reason", err)
			logged = true
		}
		t := c.clock.NewTimer(c.cfg.ReadyRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-wake:
		case <-t.C():
		}
		t.Stop()
	}
}

func (c *Candidate) ready(ctx context.Context) error {
	if c.cfg.Ready == nil {
		return nil
	}
	return c.cfg.Ready(ctx)
}

func (c *Candidate) sleep(ctx context.Context, d time.Duration) {
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}

// term is one session: campaign, lead until the session ends or ctx is
// done, resign. It returns nil when the term ended normally (lost lease,
// resigned for want of code, ctx done).
func (c *Candidate) term(ctx context.Context) error {
	s, err := NewSession(ctx, c.cfg.Client, c.ttl)
	if err != nil {
		return err
	}
	defer s.Close() // revokes the lease: deletes the election key at once

	// Campaign until won, ctx is done, or the session dies meanwhile.
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.Done():
			cancel()
		case <-cctx.Done():
		}
	}()
	e := concurrency.NewElection(s, c.cfg.Prefix)
	err = e.Campaign(cctx, c.cfg.ID)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-s.Done():
			return nil // lease lost while queued: campaign again
		default:
		}
		return fmt.Errorf("campaign: %w", err)
	}
	// Won. The seed rule, once more: the code may have gone while queued.
	if err := c.ready(ctx); err != nil {
		c.log.Warn("leader: won the election without the code of every active topology; resigning", "reason", err)
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer rcancel()
		_ = e.Resign(rctx)
		return nil
	}

	l := &Leadership{cli: c.cfg.Client, id: c.cfg.ID, key: e.Key(), rev: e.Rev(), done: make(chan struct{})}
	c.set(l)
	c.log.Info("leader: elected", "key", l.key, "rev", l.rev)
	select {
	case <-s.Done():
		c.log.Warn("leader: session lease lost; no longer the leader", "rev", l.rev)
	case <-ctx.Done():
		c.log.Info("leader: stopping; resigning", "rev", l.rev)
	}
	c.set(nil)
	close(l.done)
	return nil
}

// NewSession grants a lease of ttl seconds (bounded by ctx) and keeps it
// alive in a concurrency.Session until the session is closed or the lease
// is lost. Unlike concurrency.WithContext(ctx), the session's Close can
// still revoke the lease after ctx is done.
func NewSession(ctx context.Context, cli *clientv3.Client, ttl int) (*concurrency.Session, error) {
	lease, err := cli.Grant(ctx, int64(ttl))
	if err != nil {
		return nil, fmt.Errorf("leader: lease grant: %w", err)
	}
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(ttl), concurrency.WithLease(lease.ID),
		concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("leader: session: %w", err)
	}
	return s, nil
}

func (c *Candidate) set(l *Leadership) {
	c.mu.Lock()
	c.current = l
	c.mu.Unlock()
	c.change.Broadcast()
}

// Leadership is one term of leadership: the election key and the revision
// it was created at, the fencing token of every write of this term.
type Leadership struct {
	cli  *clientv3.Client
	id   string
	key  string
	rev  int64
	done chan struct{}
}

// Rev is the fencing token: the revision of the election key. A later
// leadership has a greater Rev.
func (l *Leadership) Rev() int64 { return l.rev }

// Key is the election key of this term.
func (l *Leadership) Key() string { return l.key }

// ID is the leader's ID.
func (l *Leadership) ID() string { return l.id }

// Done is closed when this candidate knows the term has ended. A paused
// process may not know yet: Write asks etcd, not Done.
func (l *Leadership) Done() <-chan struct{} { return l.done }

// Guard is the comparison that holds exactly while this term lasts, for a
// caller that builds its own transaction.
func (l *Leadership) Guard() clientv3.Cmp {
	return clientv3.Compare(clientv3.CreateRevision(l.key), "=", l.rev)
}

// Write commits ops in one transaction guarded by Guard. If the term has
// ended it writes nothing and returns an error matching ErrDeposed.
func (l *Leadership) Write(ctx context.Context, ops ...clientv3.Op) (*clientv3.TxnResponse, error) {
	resp, err := l.cli.Txn(ctx).If(l.Guard()).Then(ops...).Commit()
	if err != nil {
		return nil, fmt.Errorf("leader: write: %w", err)
	}
	if !resp.Succeeded {
		return resp, fmt.Errorf("%w: election key %s of revision %d is gone", ErrDeposed, l.key, l.rev)
	}
	return resp, nil
}

func (l *Leadership) String() string { return fmt.Sprintf("leadership of %s (rev %d)", l.id, l.rev) }
