//go:build roompresence_unfenced && !roompresence_mutant

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/squallstream/squall"
	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/etcdstore"
)

// This file, in the unfenced build only (go build -tags
// roompresence_unfenced), removes fencing on purpose for the mutation
// check of the partition harness (docs/partitions.md): a worker that
// ignores the owner generation. Its coordination store makes every write
// with the newest generation and over the newest version, whatever the
// writer's, so a superseded worker (a zombie behind a partition, or
// frozen and woken up) is never told it was superseded; and the
// timelines are written by a map opened without a fence just before each
// write, so Cassandra orders them by arrival, as a store without fencing
// would. The harness must then report mismatches or a split brain.

// clusterTimelines opens an unfenced map for every write.
func clusterTimelines(f trident.BackingFactory) trident.BackingFactory {
	return func(ctx context.Context, partition, n int) (state.BackingMap[[]byte], error) {
		m, err := f(ctx, partition, n)
		if err != nil {
			return nil, err
		}
		return unfencedMap{BackingMap: m, open: func(ctx context.Context) (state.BackingMap[[]byte], error) {
			return f(state.WithFence(ctx, state.Fence{}), partition, n)
		}}, nil
	}
}

type unfencedMap struct {
	state.BackingMap[[]byte]
	open func(context.Context) (state.BackingMap[[]byte], error)
}

func (m unfencedMap) MultiPut(ctx context.Context, keys []state.Key, vals [][]byte) error {
	fresh, err := m.open(ctx)
	if err != nil {
		return err
	}
	return fresh.MultiPut(state.WithFence(ctx, state.Fence{}), keys, vals)
}

// clusterStore is the unfenced coordination store over the cluster's
// etcd (the settings the supervisor hands its workers). Without them it
// returns nil: the cluster's default store.
func clusterStore(env squall.Env) coordstore.Store {
	eps := strings.Split(os.Getenv("SQUALL_ETCD_ENDPOINTS"), ",")
	cfg := clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()}
	if ca := os.Getenv("SQUALL_ETCD_CA"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			env.Logger.Error("unfenced mutant: no etcd CA", "err", err)
			return nil
		}
		tc := &tls.Config{RootCAs: x509.NewCertPool(), MinVersion: tls.VersionTLS12}
		tc.RootCAs.AppendCertsFromPEM(pem)
		if cert := os.Getenv("SQUALL_ETCD_CERT"); cert != "" {
			c, err := tls.LoadX509KeyPair(cert, os.Getenv("SQUALL_ETCD_KEY"))
			if err != nil {
				env.Logger.Error("unfenced mutant: no etcd client certificate", "err", err)
				return nil
			}
			tc.Certificates = []tls.Certificate{c}
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		env.Logger.Error("unfenced mutant: etcd", "err", err)
		return nil
	}
	prefix := os.Getenv("SQUALL_PREFIX")
	if prefix == "" {
		prefix = "/squall"
	}
	st, err := etcdstore.New(cli, meta.New(prefix).Coordination(), etcdstore.Options{})
	if err != nil {
		cli.Close()
		env.Logger.Error("unfenced mutant: etcd store", "err", err)
		return nil
	}
	env.Logger.Warn("unfenced mutant: this worker ignores owner generations (a test build)")
	return unfencedStore{Store: st, cli: cli}
}

// unfencedStore writes with the newest generation and over the newest
// version: no writer is ever fenced or in conflict.
type unfencedStore struct {
	coordstore.Store
	cli *clientv3.Client
}

func (s unfencedStore) newest(ctx context.Context, owner string) coordstore.Generation {
	g, err := s.Store.Generation(ctx, owner)
	if err != nil || g == 0 {
		return 1
	}
	return g
}

func (s unfencedStore) SwapCoordinator(ctx context.Context, f coordstore.Fence, old coordstore.Version, rec coordstore.Record) (coordstore.Version, error) {
	f.Generation = s.newest(ctx, f.Owner)
	v, err := s.Store.SwapCoordinator(ctx, f, old, rec)
	if errors.Is(err, coordstore.ErrConflict) || errors.Is(err, coordstore.ErrFenced) {
		_, cur, lerr := s.Store.LoadCoordinator(ctx, f.Owner)
		if lerr != nil {
			return 0, lerr
		}
		f.Generation = s.newest(ctx, f.Owner)
		return s.Store.SwapCoordinator(ctx, f, cur, rec)
	}
	return v, err
}

func (s unfencedStore) PutMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid state.TxID, value []byte) error {
	return s.Store.PutMeta(ctx, s.newest(ctx, k.Owner), k, txid, value)
}

func (s unfencedStore) RemoveMeta(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid state.TxID) error {
	return s.Store.RemoveMeta(ctx, s.newest(ctx, k.Owner), k, txid)
}

func (s unfencedStore) CleanupMetaBefore(ctx context.Context, gen coordstore.Generation, k coordstore.Key, txid state.TxID) error {
	return s.Store.CleanupMetaBefore(ctx, s.newest(ctx, k.Owner), k, txid)
}

func (s unfencedStore) Close() error {
	err := s.Store.Close()
	return errors.Join(err, s.cli.Close())
}
