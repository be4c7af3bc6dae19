package cassandra_test

import (
	"errors"
	"testing"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/cassandra"
	"github.com/squallstream/squall/state/cassandra/cassandratest"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/state/transactional"
)

// TestDamagedRowsAndWrongFlavour: a row whose txid is null is reported as
// corrupt, naming the key, never read as absent (a null curr is Storm's
// removed value, a tombstone); a transactional map over an opaque table is
// refused (fatal), writing nothing.
func TestDamagedRowsAndWrongFlavour(t *testing.T) {
	ctx := t.Context()
	b := openMap(t, cassandra.TableSpec{Layout: cassandra.Opaque, Keys: []cassandra.Column{{Name: "word", Type: "text"}}})
	name := b.Table().Name()
	if err := cassandratest.Session(t).Gocql().Query(`INSERT INTO ` + name + ` (word, curr) VALUES ('cow', 0x03)`).Exec(); err != nil {
		t.Fatal(err)
	}
	m := opaque.New[int64](b, state.MapOptions[int64]{})
	_, err := m.MultiGet(ctx, []state.Key{state.MustKey("cow")})
	if !errors.Is(err, state.ErrCorrupt) || !failure.IsReported(err) {
		t.Errorf("MultiGet of a row with a null txid: %v, want a reported state.ErrCorrupt", err)
	}

	tm := transactional.New[int64](b, state.MapOptions[int64]{})
	if err := tm.BeginCommit(ctx, 1); err != nil {
		t.Fatal(err)
	}
	_, err = tm.MultiUpdate(ctx, []state.Key{state.MustKey("moon")}, []state.ValueUpdater[int64]{state.Replace[int64](1)})
	if err == nil || failure.IsRetryable(err) {
		t.Errorf("a transactional value into an opaque table: %v, want a fatal error", err)
	}
	es, err := b.MultiGet(ctx, []state.Key{state.MustKey("moon")})
	if err != nil || es[0].Found {
		t.Errorf("after the refused write: %+v, %v; want absent", es, err)
	}
}
