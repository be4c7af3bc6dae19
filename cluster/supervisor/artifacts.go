package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/squallstream/squall/cluster/codestore"
)

// pruneArtifacts removes the artifacts that no slot runs or is assigned,
// once they are older than PruneAfter: the code of topologies moved away,
// killed or upgraded does not pile up.
func (s *Supervisor) pruneArtifacts(runs map[int]*slotRun, adopted map[int]*proc) {
	keep := map[codestore.Digest]bool{}
	for _, r := range runs {
		if dg, err := codestore.ParseDigest(r.work.Artifact); err == nil {
			keep[dg] = true
		}
	}
	for _, p := range adopted {
		if dg, err := codestore.ParseDigest(p.rec.Artifact); err == nil {
			keep[dg] = true
		}
	}
	removed, err := s.artifacts.Prune(keep, s.clock.Now().Add(-s.cfg.PruneAfter))
	for _, dg := range removed {
		s.log.Info("supervisor: removed an artifact no slot uses", "artifact", dg)
	}
	if err != nil {
		s.log.Warn("supervisor: removing unused artifacts", "err", err)
	}
}

// artifact returns the path of a verified, executable copy of dg, fetching
// it from a nimbus holding it if needed.
func (s *Supervisor) artifact(ctx context.Context, topology string, dg codestore.Digest) (string, error) {
	s.mu.Lock()
	lock := s.fetching[dg]
	if lock == nil {
		lock = &sync.Mutex{}
		s.fetching[dg] = lock
	}
	s.mu.Unlock()
	lock.Lock() // one fetch of an artifact at a time
	defer lock.Unlock()
	path := s.artifacts.Path(dg)
	s.mu.Lock()
	ok := s.verified[dg]
	s.mu.Unlock()
	if ok {
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	if err := s.artifacts.Verify(dg); err != nil {
		if err := s.fetch(ctx, topology, dg); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(path, 0o700); err != nil {
		return "", fmt.Errorf("supervisor: %w", err)
	}
	s.mu.Lock()
	s.verified[dg] = true
	s.mu.Unlock()
	return path, nil
}

// fetch downloads dg from the nimbuses holding it (codestore.Dir.Fetch),
// asking, when the supervisor has certificates, only those that serve
// HTTPS; the HTTP client accepts only nimbus certificates of the cluster.
func (s *Supervisor) fetch(ctx context.Context, topology string, dg codestore.Digest) error {
	resp, err := s.cfg.Client.Get(ctx, s.keys.Holders(topology, dg.String()), clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("supervisor: looking up holders of %s: %w", dg, err)
	}
	if len(resp.Kvs) == 0 {
		return fmt.Errorf("supervisor: no nimbus holds artifact %s of topology %s", dg, topology)
	}
	var errs []error
	for _, kv := range resp.Kvs {
		url := strings.TrimSuffix(string(kv.Value), "/") + "/code/" + dg.String()
		if s.cfg.Bundle != nil && !strings.HasPrefix(url, "https://") {
			s.refused.Add(1)
			s.log.Error("supervisor: refusing a code holder that does not serve HTTPS", "key", string(kv.Key), "url", url)
			errs = append(errs, fmt.Errorf("holder %s: not HTTPS", url))
			continue
		}
		err := s.artifacts.Fetch(ctx, s.cfg.HTTPClient, url, dg)
		if err == nil {
			s.log.Info("supervisor: fetched an artifact", "topology", topology, "artifact", dg, "from", url)
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("supervisor: fetching artifact %s of topology %s: %w", dg, topology, errors.Join(errs...))
}
