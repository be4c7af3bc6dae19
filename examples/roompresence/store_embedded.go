package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/bolt"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
)

// embeddedStore keeps everything in two bbolt files in one directory:
// state.db (the presence and room_timelines buckets) and coord.db (the
// coordination store).
type embeddedStore struct {
	db        *bbolt.DB
	timelines *bolt.Map
	coord     *boltstore.Store
}

var presenceBucket = []byte("presence")

func openEmbedded(ctx context.Context, dir string) (*embeddedStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	db, err := bbolt.Open(filepath.Join(dir, "state.db"), 0o600, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("opening the embedded store in %s: %w", dir, err)
	}
	s := &embeddedStore{db: db}
	err = db.Update(func(tx *bbolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(presenceBucket)
		return err
	})
	if err == nil {
		s.timelines, err = bolt.New(db, timelineMap)
	}
	if err == nil {
		s.coord, err = boltstore.Open(ctx, filepath.Join(dir, "coord.db"), boltstore.Options{LockTimeout: 5 * time.Second})
	}
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("opening the embedded store in %s: %w", dir, err)
	}
	return s, nil
}

func (s *embeddedStore) Upsert(ctx context.Context, events []room.Event) ([]room.Period, error) {
	if err := ctx.Err(); err != nil {
		return nil, failure.Retryable(err)
	}
	touched := map[string]room.Period{}
	order := []string{}
	err := s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(presenceBucket)
		for _, e := range events {
			p, ok := touched[e.Visit]
			if !ok {
				var err error
				if p, err = decodePeriod(b.Get([]byte(e.Visit))); err != nil {
					return err
				}
				order = append(order, e.Visit)
			}
			touched[e.Visit] = p.With(e)
		}
		for _, v := range order {
			raw, err := json.Marshal(touched[v])
			if err != nil {
				return err
			}
			if err := b.Put([]byte(v), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]room.Period, len(order))
	for i, v := range order {
		out[i] = touched[v]
	}
	return out, nil
}

func decodePeriod(raw []byte) (room.Period, error) {
	var p room.Period
	if raw == nil {
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("presence row %q: %w", raw, err)
	}
	return p, nil
}

func (s *embeddedStore) Timelines() trident.BackingFactory {
	return func(context.Context, int, int) (state.BackingMap[[]byte], error) { return s.timelines, nil }
}

func (s *embeddedStore) Coordination() coordstore.Store { return s.coord }

// Version is 1: the embedded store keeps one version of the results.
func (s *embeddedStore) Version() int { return 1 }

func (s *embeddedStore) ScanPresence(ctx context.Context, fn func(room.Period) error) error {
	return s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(presenceBucket).ForEach(func(_, v []byte) error {
			p, err := decodePeriod(v)
			if err != nil {
				return err
			}
			return fn(p)
		})
	})
}

func (s *embeddedStore) TimelineKeys(ctx context.Context) ([]state.Key, error) {
	var keys []state.Key
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte(timelineMap)).ForEach(func(k, _ []byte) error {
			key, err := state.DecodeKey(k)
			keys = append(keys, key)
			return err
		})
	})
	return keys, err
}

func (s *embeddedStore) Close() error {
	return errors.Join(s.coord.Close(), s.db.Close())
}
