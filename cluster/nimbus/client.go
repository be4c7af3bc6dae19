package nimbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// Client sends the command line's requests to the leader nimbus: it looks
// the leader's ID (its address) up in etcd, and follows a standby's
// not-leader answer to the leader it names.
type Client struct {
	Etcd *clientv3.Client // to find the leader (required unless Nimbus is set)
	Keys meta.Layout
	// Nimbus, if set, is the address (host:port) of the one nimbus to ask;
	// a standby's refusal is then an error naming the leader.
	Nimbus string
	// Bundle, if set, is the client's certificate (role client or admin):
	// the client then speaks HTTPS and accepts only nimbuses of the
	// cluster. HTTP is ignored then.
	Bundle *pki.Bundle
	HTTP   *http.Client // nil: no timeout beyond ctx

	tlsOnce sync.Once
	tls     *http.Client
}

// httpClient is the client's HTTP client and URL scheme.
func (c *Client) httpClient() (*http.Client, string) {
	if c.Bundle != nil {
		c.tlsOnce.Do(func() {
			c.tls = &http.Client{Transport: &http.Transport{TLSClientConfig: c.Bundle.ClientTLS(pki.Nimbus)}}
		})
		return c.tls, "https://"
	}
	if c.HTTP != nil {
		return c.HTTP, "http://"
	}
	return http.DefaultClient, "http://"
}

// APIError is a nimbus's refusal.
type APIError struct {
	Nimbus  string // who answered
	Status  int
	Kind    string
	Message string
	Leader  string
}

func (e *APIError) Error() string {
	if e.Kind == "not_leader" {
		if e.Leader == "" {
			return fmt.Sprintf("nimbus %s is not the leader, and no leader is elected right now", e.Nimbus)
		}
		return fmt.Sprintf("nimbus %s is not the leader; the leader is %s", e.Nimbus, e.Leader)
	}
	return fmt.Sprintf("nimbus %s: %s", e.Nimbus, e.Message)
}

// Is matches ErrNotFound, ErrInvalid and leader.ErrNotLeader by kind.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Kind == "not_found"
	case ErrInvalid:
		return e.Kind == "invalid"
	case leader.ErrNotLeader:
		return e.Kind == "not_leader"
	}
	return false
}

// Leader returns the address of the elected nimbus.
func (c *Client) Leader(ctx context.Context) (string, error) {
	if c.Etcd == nil {
		return "", errors.New("nimbus: Client has neither Etcd nor Nimbus")
	}
	id, err := leader.LeaderID(ctx, c.Etcd, c.Keys.Leader())
	if err != nil {
		return "", fmt.Errorf("nimbus: looking the leader up in etcd: %w", err)
	}
	if id == "" {
		return "", fmt.Errorf("nimbus: no nimbus leads under %s (is a nimbus running, on this etcd and prefix?)", c.Keys.Leader())
	}
	return id, nil
}

func (c *Client) do(ctx context.Context, method, path string, body func() (io.ReadCloser, error), out any) error {
	return c.doHeader(ctx, method, path, nil, body, out)
}

// doHeader is do with the request's headers h added.
func (c *Client) doHeader(ctx context.Context, method, path string, h http.Header, body func() (io.ReadCloser, error), out any) error {
	hc, scheme := c.httpClient()
	var lastErr error
	wait := 200 * time.Millisecond
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(lastErr, ctx.Err())
			case <-time.After(wait):
			}
			wait = min(2*wait, time.Second)
		}
		addr := c.Nimbus
		if addr == "" {
			var err error
			if addr, err = c.Leader(ctx); err != nil {
				return err
			}
		}
		var rd io.ReadCloser
		if body != nil {
			var err error
			if rd, err = body(); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, method, scheme+addr+path, rd)
		if err != nil {
			if rd != nil {
				rd.Close()
			}
			return err
		}
		for k, vs := range h {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		resp, err := hc.Do(req)
		if err != nil {
			err = fmt.Errorf("nimbus %s: %w", addr, err)
			if c.Nimbus == "" && unreachable(err) && ctx.Err() == nil {
				lastErr = err // the leader is gone: a standby takes over within its TTL
				continue
			}
			return err
		}
		err = decode(addr, resp, out)
		var ae *APIError
		if c.Nimbus == "" && errors.As(err, &ae) && (ae.Kind == "not_leader" || ae.Kind == "unavailable") {
			lastErr = err // leadership is changing: look the leader up again
			continue
		}
		return err
	}
	return lastErr
}

// maxAttempts bounds a request's tries while leadership moves: with waits
// growing to 1s, about half a minute, beyond a leader's lease TTL.
const maxAttempts = 30

// unreachable reports an error of a nimbus that cannot be reached (its
// process is gone: connection refused or reset), not of one that
// answered.
func unreachable(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

func decode(addr string, resp *http.Response, out any) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("nimbus %s: reading the answer: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e = apiError{Error: resp.Status + ": " + strings.TrimSpace(string(b)), Kind: "internal"}
		}
		return &APIError{Nimbus: addr, Status: resp.StatusCode, Kind: e.Kind, Message: e.Error, Leader: e.Leader}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("nimbus %s: bad answer: %w", addr, err)
		}
	}
	return nil
}

// Submit uploads the file at artifact as topology name's code, with its
// demand (nil: the topology declares no load), which replaces the one of
// an earlier submission. A demand EncodeDemand refuses is refused here,
// before anything is sent.
func (c *Client) Submit(ctx context.Context, name string, workers int, fingerprint string, demand *meta.Demand,
	artifact string) (meta.Spec, error) {
	var s meta.Spec
	dh, err := EncodeDemand(demand)
	if err != nil {
		return s, fmt.Errorf("submitting %s: %w", name, err)
	}
	var h http.Header
	if dh != "" {
		h = http.Header{DemandHeader: {dh}}
	}
	q := url.Values{"workers": {strconv.Itoa(workers)}, "fingerprint": {fingerprint}}
	err = c.doHeader(ctx, http.MethodPost, "/api/topologies/"+url.PathEscape(name)+"?"+q.Encode(), h,
		func() (io.ReadCloser, error) { return os.Open(artifact) }, &s)
	return s, err
}

// Kill removes a topology.
func (c *Client) Kill(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/api/topologies/"+url.PathEscape(name), nil, nil)
}

// Activate lets a topology's sources emit again.
func (c *Client) Activate(ctx context.Context, name string) (meta.Spec, error) {
	return c.action(ctx, name, "activate", nil)
}

// Deactivate stops a topology's sources from starting batches.
func (c *Client) Deactivate(ctx context.Context, name string) (meta.Spec, error) {
	return c.action(ctx, name, "deactivate", nil)
}

// Rebalance schedules a topology afresh with workers workers (0: as many
// as before).
func (c *Client) Rebalance(ctx context.Context, name string, workers int) (meta.Spec, error) {
	return c.action(ctx, name, "rebalance", url.Values{"workers": {strconv.Itoa(workers)}})
}

func (c *Client) action(ctx context.Context, name, action string, q url.Values) (meta.Spec, error) {
	var s meta.Spec
	path := "/api/topologies/" + url.PathEscape(name) + "/" + action
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	err := c.do(ctx, http.MethodPost, path, nil, &s)
	return s, err
}

// List reports every topology.
func (c *Client) List(ctx context.Context) ([]TopologyInfo, error) {
	var ts []TopologyInfo
	err := c.do(ctx, http.MethodGet, "/api/topologies", nil, &ts)
	return ts, err
}
