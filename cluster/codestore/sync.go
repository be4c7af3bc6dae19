package codestore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/internal/backoff"
	"github.com/squallstream/squall/internal/clock"
)

// Run syncs until ctx is done: it keeps this nimbus's holder keys under a
// lease, fetches the artifacts of recorded topologies it lacks, and hashes
// its copies again every ScanInterval. It returns ctx's error.
func (s *Store) Run(ctx context.Context) error {
	retry := backoff.Sequence{Backoff: backoff.Exponential(int64(100*time.Millisecond), int64(5*time.Second))}
	ttl := max(1, int(math.Ceil(s.cfg.TTL.Seconds())))
	for ctx.Err() == nil {
		sess, err := leader.NewSession(ctx, s.cfg.Client, ttl)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("codestore: no lease for the holder keys; retrying", "err", err)
				_ = clock.Sleep(ctx, s.clock, time.Duration(retry.Next())) // a done ctx ends the loop
			}
			continue
		}
		retry.Reset()
		s.mu.Lock()
		s.session, s.held = sess, map[string]bool{}
		s.mu.Unlock()
		s.runSession(ctx, sess)
		s.mu.Lock()
		s.session, s.held = nil, map[string]bool{}
		s.mu.Unlock()
		sess.Close() // revokes the lease: the holder keys vanish
		s.changed.Broadcast()
	}
	return ctx.Err()
}

// runSession syncs until the session's lease is lost or ctx is done.
func (s *Store) runSession(ctx context.Context, sess *concurrency.Session) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := s.cfg.Client.Watch(clientv3.WithRequireLeader(wctx), s.cfg.Prefix+"/", clientv3.WithPrefix())
	failures := backoff.Sequence{Backoff: backoff.Exponential(int64(200*time.Millisecond), int64(5*time.Second))}
	verified := map[Digest]bool{}
	full := true
	for {
		scan := s.clock.NewTimer(s.cfg.ScanInterval)
		var retryC <-chan time.Time
		var retry clock.Timer
		if err := s.sync(ctx, sess, verified, full); err != nil {
			if ctx.Err() != nil {
				scan.Stop()
				return
			}
			s.log.Warn("codestore: sync incomplete; retrying", "err", err)
			retry = s.clock.NewTimer(time.Duration(failures.Next()))
			retryC = retry.C()
		} else {
			failures.Reset()
		}
		full = false
		select {
		case <-ctx.Done():
		case <-sess.Done():
			s.log.Warn("codestore: holder lease lost; registering again")
		case _, ok := <-watch:
			if !ok && ctx.Err() == nil {
				watch = s.cfg.Client.Watch(clientv3.WithRequireLeader(wctx), s.cfg.Prefix+"/", clientv3.WithPrefix())
			}
		case <-s.kick:
		case <-scan.C():
			full = true
		case <-retryC:
		}
		scan.Stop()
		if retry != nil {
			retry.Stop()
		}
		select {
		case <-ctx.Done():
			return
		case <-sess.Done():
			return
		default:
		}
	}
}

// sync brings local copies and holder keys in line with the records once.
// full hashes every copy again; otherwise only copies not yet verified in
// this session are.
func (s *Store) sync(ctx context.Context, sess *concurrency.Session, verified map[Digest]bool, full bool) error {
	recs, _, err := s.Records(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	held := s.held
	s.mu.Unlock()
	changed := false
	want := map[string]bool{}
	var errs []error
	for _, r := range recs {
		dg, err := ParseDigest(r.Artifact)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		key := s.HoldersPrefix(r.Topology, dg) + s.cfg.ID
		want[key] = true
		if !verified[dg] || full {
			err := s.cfg.Dir.Verify(dg)
			if errors.Is(err, ErrCorrupt) {
				s.log.Warn("codestore: corrupt copy removed; fetching it again", "topology", r.Topology, "err", err)
			} else if err != nil && verified[dg] {
				s.log.Warn("codestore: copy gone; fetching it again", "topology", r.Topology, "err", err)
			}
			verified[dg] = err == nil
		}
		if !verified[dg] {
			if held[key] {
				if _, err := s.cfg.Client.Delete(ctx, key); err != nil {
					errs = append(errs, err)
					continue
				}
				delete(held, key)
				changed = true
			}
			if err := s.fetch(ctx, r.Topology, dg); err != nil {
				errs = append(errs, err)
				continue
			}
			verified[dg] = true
			s.log.Info("codestore: fetched", "topology", r.Topology, "artifact", dg)
		}
		if !held[key] {
			if _, err := s.cfg.Client.Put(ctx, key, s.cfg.URL, clientv3.WithLease(sess.Lease())); err != nil {
				errs = append(errs, err)
				continue
			}
			held[key] = true
			changed = true
		}
	}
	for key := range held {
		if !want[key] {
			if _, err := s.cfg.Client.Delete(ctx, key); err != nil {
				errs = append(errs, err)
				continue
			}
			delete(held, key)
			changed = true
		}
	}
	if full {
		keep := map[Digest]bool{}
		for _, r := range recs {
			if dg, err := ParseDigest(r.Artifact); err == nil {
				keep[dg] = true
			}
		}
		removed, err := s.cfg.Dir.Prune(keep, s.clock.Now().Add(-s.cfg.PruneAfter))
		for _, dg := range removed {
			delete(verified, dg)
			s.log.Info("codestore: removed an artifact no topology uses", "artifact", dg)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if changed || len(errs) == 0 {
		// Wake whoever waits on the seed rule: records or copies may have
		// changed (a spare wake-up only costs a check).
		s.changed.Broadcast()
	}
	return errors.Join(errs...)
}

// fetch copies an artifact from any other holder, verifying its digest.
func (s *Store) fetch(ctx context.Context, topology string, dg Digest) error {
	holders, _, err := s.Holders(ctx, topology, dg)
	if err != nil {
		return err
	}
	delete(holders, s.cfg.ID)
	if len(holders) == 0 {
		return fmt.Errorf("codestore: no nimbus holds %s of topology %s yet", dg, topology)
	}
	ids := make([]string, 0, len(holders))
	for id := range holders {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var errs []error
	for _, id := range ids {
		err := s.cfg.Dir.Fetch(ctx, s.cfg.HTTPClient, strings.TrimSuffix(holders[id], "/")+"/code/"+dg.String(), dg)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("from %s: %w", id, err))
	}
	return fmt.Errorf("codestore: fetching %s of topology %s: %w", dg, topology, errors.Join(errs...))
}
