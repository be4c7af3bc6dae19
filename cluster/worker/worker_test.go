package worker

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/squallstream/squall/cluster/internal/etcdtest"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/trident"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func build(calls *atomic.Int64, err error) func(Env) (*trident.Topology, trident.Config, error) {
	return func(Env) (*trident.Topology, trident.Config, error) {
		calls.Add(1)
		return nil, trident.Config{}, err
	}
}

func TestConfigValidate(t *testing.T) {
	cli := &clientv3.Client{}
	ok := Config{Client: cli, Topology: Topology{Name: "wc", Build: build(new(atomic.Int64), nil)}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a minimal config: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"no client":         func(c *Config) { c.Client = nil },
		"no build":          func(c *Config) { c.Topology.Build = nil },
		"no name":           func(c *Config) { c.Topology.Name = "" },
		"a slash in a name": func(c *Config) { c.Topology.Name = "a/b" },
		"negative TTL":      func(c *Config) { c.TTL = -time.Second },
		"negative stop":     func(c *Config) { c.StopTimeout = -1 },
		"negative status":   func(c *Config) { c.StatusInterval = -1 },
		"negative errors":   func(c *Config) { c.ErrorInterval = -1 },
	} {
		c := ok
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		} else if code, rerr := Run(context.Background(), c); code != 1 || rerr == nil {
			t.Errorf("%s: Run returned %d, %v; want 1 and an error", name, code, rerr)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{}.withDefaults()
	if c.TTL != DefaultTTL || c.StatusInterval != DefaultStatusInterval || c.ErrorInterval != DefaultErrorInterval ||
		c.StopTimeout != DefaultStopTimeout || c.Listen != DefaultListen || c.Logger == nil {
		t.Fatalf("defaults of the zero Config: %+v", c)
	}
	set := Config{TTL: 3 * time.Second, StatusInterval: 1, ErrorInterval: 2, StopTimeout: 4, Listen: "127.0.0.1:7", Logger: quiet}
	if got := set.withDefaults(); got.TTL != set.TTL || got.StatusInterval != 1 || got.ErrorInterval != 2 ||
		got.StopTimeout != 4 || got.Listen != set.Listen || got.Logger != quiet {
		t.Fatalf("set fields changed: %+v", got)
	}
}

// certs is a cluster CA's nimbus, client and supervisor.
type certs struct {
	nimbus, client, sup *pki.Bundle
}

func newCerts(t *testing.T, now time.Time) certs {
	ca, err := pki.NewAuthority("t", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(r pki.Role) *pki.Bundle {
		b, err := ca.Issue(pki.Request{Role: r, Name: string(r), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return certs{issue(pki.Nimbus), issue(pki.Client), issue(pki.Supervisor)}
}

// workerCert is the certificate a supervisor issues a worker of topology
// in epoch.
func (c certs) workerCert(t *testing.T, topology string, epoch int64, now time.Time) *pki.Bundle {
	b, err := c.sup.IssueWorker(pki.WorkerName(topology, epoch), nil, 0, now)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStartupChecks: before it builds anything, a worker exits stopped
// when its slot is not assigned, refuses (exit 1) an assignment no
// nimbus of the cluster signed, and exits reassigned (meta.ExitReassigned)
// with a certificate of another epoch than its assignment's.
func TestStartupChecks(t *testing.T) {
	cli := etcdtest.Client(t, etcdtest.Embedded(t))
	keys := meta.New("/w")
	now := time.Now()
	pk := newCerts(t, now)
	slot := meta.Slot{Supervisor: "s1", Port: 7000}
	errBuild := errors.New("built")
	for _, c := range []struct {
		name     string
		slots    []meta.Slot
		signer   *pki.Bundle // nil: unsigned
		none     bool        // no assignment at all
		cert     int64       // the worker certificate's epoch; 0: no certificates
		wantCode int
		wantErr  error // nil: none
		built    bool
	}{
		{name: "no assignment", none: true, wantCode: meta.ExitStopped},
		{name: "another slot", slots: []meta.Slot{{Supervisor: "s2", Port: 7000}}, wantCode: meta.ExitStopped},
		{name: "no certificates, unsigned", slots: []meta.Slot{slot}, wantCode: 1, wantErr: errBuild, built: true},
		{name: "unsigned", slots: []meta.Slot{slot}, cert: 3, wantCode: 1, wantErr: pki.ErrUntrusted},
		{name: "signed by a client", slots: []meta.Slot{slot}, signer: pk.client, cert: 3, wantCode: 1, wantErr: pki.ErrUntrusted},
		{name: "a certificate of another epoch", slots: []meta.Slot{slot}, signer: pk.nimbus, cert: 2, wantCode: meta.ExitReassigned},
		{name: "signed, this epoch", slots: []meta.Slot{slot}, signer: pk.nimbus, cert: 3, wantCode: 1, wantErr: errBuild, built: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			topo := "t" + strings.ReplaceAll(c.name, " ", "-")
			topo = strings.ReplaceAll(topo, ",", "")
			if !c.none {
				a := meta.Assignment{Topology: topo, Artifact: "ab", Status: meta.Active, Epoch: 3}
				for _, s := range c.slots {
					a.Workers = append(a.Workers, meta.Worker{Slot: s})
				}
				if c.signer != nil {
					if err := a.Sign(c.signer); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := cli.Put(context.Background(), keys.Assignment(topo), meta.Encode(a)); err != nil {
					t.Fatal(err)
				}
			}
			var calls atomic.Int64
			cfg := Config{Client: cli, Prefix: "/w", Topology: Topology{Name: topo, Build: build(&calls, errBuild)},
				Slot: slot, DataDir: t.TempDir(), Logger: quiet}
			if c.cert != 0 {
				cfg.Bundle = pk.workerCert(t, topo, c.cert, now)
			}
			code, err := Run(context.Background(), cfg)
			if code != c.wantCode || (c.wantErr == nil) != (err == nil) || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Fatalf("Run: %d, %v; want %d, %v", code, err, c.wantCode, c.wantErr)
			}
			if built := calls.Load() > 0; built != c.built {
				t.Fatalf("built: %v, want %v", built, c.built)
			}
		})
	}
}
