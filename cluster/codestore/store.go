// Package codestore keeps the code of topologies consistent across nimbus
// hosts, as Storm's BlobStore with its leader's replication wait does.
//
// An artifact (the user's binary) is stored by its sha256 in a local Dir on
// every nimbus. etcd holds, under Config.Prefix:
//
//	topologies/<topology>                 Record: artifact digest, status (written by the leader, fenced)
//	code/<topology>/<digest>/<holder ID>  the holder's base URL, under the holder's lease
//
// A holder key exists only while its nimbus runs (the lease) and holds a
// verified copy. Every Store syncs in the background: for each recorded
// topology whose artifact it lacks, it fetches the artifact over HTTP
// (GET <url>/code/<digest>) from any holder, verifies its sha256, stores it,
// and registers as a holder. Every Config.ScanInterval it hashes its copies
// again; a deleted or corrupt copy loses its holder key and is fetched anew.
//
// Upload (on the leader) stores the artifact, records the topology as
// uploading, waits until Config.ReplicationFactor nimbuses hold it, then
// marks it active; only active topologies count for the seed rule
// (Missing), so a topology never becomes active with fewer copies than the
// replication factor.
package codestore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/squallstream/squall/cluster/leader"
	"github.com/squallstream/squall/internal/clock"
	"github.com/squallstream/squall/internal/notify"
)

// Status of a topology's code.
type Status string

const (
	Uploading Status = "uploading" // stored on the leader, replicating
	Active    Status = "active"    // replicated; counts for the seed rule
)

// Record is the value of topologies/<topology>.
type Record struct {
	Topology string `json:"topology"`
	Artifact string `json:"artifact"` // Digest.String()
	Status   Status `json:"status"`
}

// Writer commits operations only while its caller leads: a
// *leader.Leadership.
type Writer interface {
	Write(ctx context.Context, ops ...clientv3.Op) (*clientv3.TxnResponse, error)
}

var _ Writer = (*leader.Leadership)(nil)

// ErrReplication: Upload's artifact did not reach ReplicationFactor holders
// within ReplicationTimeout (a *ReplicationError).
var ErrReplication = errors.New("codestore: replication not reached")

// ReplicationError says how far replication got.
type ReplicationError struct {
	Topology      string
	Holders, Want int
	Timeout       time.Duration
}

func (e *ReplicationError) Error() string {
	return fmt.Sprintf("codestore: code of topology %s reached %d of %d nimbus hosts within %v; upload withdrawn",
		e.Topology, e.Holders, e.Want, e.Timeout)
}

// Is makes errors.Is(err, ErrReplication) hold.
func (e *ReplicationError) Is(target error) bool { return target == ErrReplication }

// Defaults of the zero Config.
const (
	DefaultTTL                = 10 * time.Second
	DefaultScanInterval       = 10 * time.Second
	DefaultPruneAfter         = 10 * time.Minute
	DefaultReplicationFactor  = 1
	DefaultReplicationTimeout = 60 * time.Second
)

// Config of a Store.
type Config struct {
	Client *clientv3.Client // required
	Prefix string           // required, e.g. "/squall"
	ID     string           // this nimbus, unique (required)
	URL    string           // base URL where this nimbus serves Handler (required)
	Dir    *Dir             // required
	// TTL of the lease under this nimbus's holder keys (default 10s).
	TTL time.Duration
	// ScanInterval: how often copies are hashed again and missing ones
	// retried (default 10s).
	ScanInterval time.Duration
	// PruneAfter: an artifact no topology's record names is removed from
	// the Dir at the first full scan that long after it was stored
	// (default 10m): the code of killed topologies and of replaced
	// versions does not pile up.
	PruneAfter time.Duration
	// ReplicationFactor: nimbus hosts (the leader included) that must hold
	// an artifact before Upload activates it (default 1).
	ReplicationFactor int
	// ReplicationTimeout bounds Upload's wait (default 60s).
	ReplicationTimeout time.Duration
	HTTPClient         *http.Client // nil: a client with a 30s timeout
	Clock              clock.Clock  // nil: the system clock
	Logger             *slog.Logger // nil: slog.Default()
}

// Validate reports a Config that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Client == nil || c.Dir == nil:
		return errors.New("codestore: Config.Client and Config.Dir are required")
	case c.Prefix == "" || c.ID == "" || c.URL == "":
		return errors.New("codestore: Config.Prefix, ID and URL are required")
	case strings.Contains(c.ID, "/"):
		return fmt.Errorf("codestore: Config.ID %q contains a slash", c.ID)
	case c.TTL < 0 || c.ScanInterval < 0 || c.PruneAfter < 0 || c.ReplicationTimeout < 0 || c.ReplicationFactor < 0:
		return errors.New("codestore: negative value in Config")
	}
	return nil
}

// Store syncs one nimbus's artifacts with the others while Run runs.
type Store struct {
	cfg     Config
	log     *slog.Logger
	clock   clock.Clock
	changed notify.Signal
	kick    chan struct{}

	mu      sync.Mutex
	session *concurrency.Session
	held    map[string]bool // holder keys registered under session
}

// New returns a Store; call Run to sync and serve Handler for the others.
func New(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.TTL = cmp.Or(cfg.TTL, DefaultTTL)
	cfg.ScanInterval = cmp.Or(cfg.ScanInterval, DefaultScanInterval)
	cfg.PruneAfter = cmp.Or(cfg.PruneAfter, DefaultPruneAfter)
	cfg.ReplicationFactor = cmp.Or(cfg.ReplicationFactor, DefaultReplicationFactor)
	cfg.ReplicationTimeout = cmp.Or(cfg.ReplicationTimeout, DefaultReplicationTimeout)
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Prefix = strings.TrimSuffix(cfg.Prefix, "/")
	return &Store{cfg: cfg, log: cfg.Logger.With("nimbus", cfg.ID), clock: clock.Or(cfg.Clock),
		kick: make(chan struct{}, 1), held: map[string]bool{}}, nil
}

func (s *Store) topologiesPrefix() string { return s.cfg.Prefix + "/topologies/" }
func (s *Store) codePrefix() string       { return s.cfg.Prefix + "/code/" }

// TopologyKey is the key of a topology's Record.
func (s *Store) TopologyKey(topology string) string { return s.topologiesPrefix() + topology }

// HoldersPrefix is the prefix of the holder keys of one artifact.
func (s *Store) HoldersPrefix(topology string, dg Digest) string {
	return fmt.Sprintf("%s%s/%s/", s.codePrefix(), topology, dg)
}

// Changed returns a channel closed at the next change of what this nimbus
// holds or of the recorded topologies (a Wake for the seed rule).
func (s *Store) Changed() <-chan struct{} { return s.changed.Wait() }

// Records reads every topology's record.
func (s *Store) Records(ctx context.Context) ([]Record, int64, error) {
	resp, err := s.cfg.Client.Get(ctx, s.topologiesPrefix(), clientv3.WithPrefix())
	if err != nil {
		return nil, 0, fmt.Errorf("codestore: reading topologies: %w", err)
	}
	var out []Record
	for _, kv := range resp.Kvs {
		var r Record
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, 0, fmt.Errorf("codestore: bad record at %s: %w", kv.Key, err)
		}
		out = append(out, r)
	}
	return out, resp.Header.Revision, nil
}

// Missing lists the active topologies whose artifact this nimbus does not
// hold intact (each copy is hashed again): the seed rule's question. A
// nimbus may lead only when it is empty.
func (s *Store) Missing(ctx context.Context) ([]string, error) {
	recs, _, err := s.Records(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, r := range recs {
		if r.Status != Active {
			continue
		}
		dg, err := ParseDigest(r.Artifact)
		if err != nil {
			return nil, err
		}
		if err := s.cfg.Dir.Verify(dg); err != nil {
			missing = append(missing, r.Topology)
		}
	}
	return missing, nil
}

// Ready is Missing as an error, for leader.Config.Ready.
func (s *Store) Ready(ctx context.Context) error {
	missing, err := s.Missing(ctx)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("codestore: missing the code of active topologies %v", missing)
	}
	return nil
}

// Handler serves this nimbus's artifacts to the others:
// GET /code/{digest}.
func (s *Store) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /code/{digest}", func(w http.ResponseWriter, r *http.Request) {
		dg, err := ParseDigest(r.PathValue("digest"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f, err := s.cfg.Dir.Open(dg)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		http.ServeContent(w, r, dg.String(), time.Time{}, f)
	})
	return mux
}

// Upload stores an artifact for topology on the leader, waits until
// ReplicationFactor nimbus hosts hold it, and marks the topology active,
// every etcd write through w (the leadership). Run must be running. On a
// replication timeout the record is withdrawn and the error matches
// ErrReplication.
func (s *Store) Upload(ctx context.Context, w Writer, topology string, r io.Reader) (Digest, error) {
	if topology == "" || strings.Contains(topology, "/") {
		return Digest{}, fmt.Errorf("codestore: bad topology name %q", topology)
	}
	dg, err := s.cfg.Dir.Put(r)
	if err != nil {
		return dg, err
	}
	rec := Record{Topology: topology, Artifact: dg.String(), Status: Uploading}
	if err := s.putRecord(ctx, w, rec); err != nil {
		return dg, err
	}
	s.Kick()

	wctx, cancel := context.WithTimeout(ctx, s.cfg.ReplicationTimeout)
	defer cancel()
	n, err := s.waitHolders(wctx, topology, dg, s.cfg.ReplicationFactor)
	if err != nil {
		if ctx.Err() != nil {
			return dg, ctx.Err()
		}
		dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer dcancel()
		if _, derr := w.Write(dctx, clientv3.OpDelete(s.TopologyKey(topology))); derr != nil {
			s.log.Warn("codestore: withdrawing the upload failed", "topology", topology, "err", derr)
		}
		return dg, &ReplicationError{Topology: topology, Holders: n, Want: s.cfg.ReplicationFactor, Timeout: s.cfg.ReplicationTimeout}
	}
	rec.Status = Active
	if err := s.putRecord(ctx, w, rec); err != nil {
		return dg, err
	}
	return dg, nil
}

func (s *Store) putRecord(ctx context.Context, w Writer, rec Record) error {
	b, _ := json.Marshal(rec)
	if _, err := w.Write(ctx, clientv3.OpPut(s.TopologyKey(rec.Topology), string(b))); err != nil {
		return fmt.Errorf("codestore: recording topology %s: %w", rec.Topology, err)
	}
	return nil
}

// Holders lists the IDs and URLs of the nimbuses holding an artifact.
func (s *Store) Holders(ctx context.Context, topology string, dg Digest) (map[string]string, int64, error) {
	p := s.HoldersPrefix(topology, dg)
	resp, err := s.cfg.Client.Get(ctx, p, clientv3.WithPrefix())
	if err != nil {
		return nil, 0, err
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		out[strings.TrimPrefix(string(kv.Key), p)] = string(kv.Value)
	}
	return out, resp.Header.Revision, nil
}

// waitHolders watches the holder keys until want exist; it returns the last
// count seen.
func (s *Store) waitHolders(ctx context.Context, topology string, dg Digest, want int) (int, error) {
	n := 0
	for {
		hs, rev, err := s.Holders(ctx, topology, dg)
		if err != nil {
			return n, err
		}
		if n = len(hs); n >= want {
			return n, nil
		}
		wctx, cancel := context.WithCancel(ctx)
		wc := s.cfg.Client.Watch(clientv3.WithRequireLeader(wctx), s.HoldersPrefix(topology, dg),
			clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		select {
		case <-wc:
		case <-ctx.Done():
		}
		cancel()
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
	}
}

// Kick makes Run sync now rather than at its next scan.
func (s *Store) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}
