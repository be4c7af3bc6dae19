package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/txn"
)

// TestStatementKind classifies the statements the example and squall's
// Cassandra packages send.
func TestStatementKind(t *testing.T) {
	for stmt, want := range map[string]string{
		"UPDATE ks.presence SET room = ?, person = ? WHERE visit = ?":                         stmtPresenceUpsert,
		"UPDATE ks.presence_v2 SET room = ? WHERE visit = ?":                                  stmtPresenceUpsert,
		"SELECT room, person, start_at, end_at FROM ks.presence WHERE visit = ?":              stmtPresenceRead,
		"SELECT txid, curr, prev FROM ks.room_timelines WHERE room = ? AND hour = ?":          stmtTimelineRead,
		"INSERT INTO ks.room_timelines_v3 (room, hour, v) VALUES (?, ?, ?) USING TIMESTAMP ?": stmtTimelineWrite,
		"SELECT epoch, gen FROM ks.squall_fences WHERE name = ?":                              stmtCoordination,
		"UPDATE ks.squall_versions SET version = ? WHERE name = ? IF version = ?":             stmtCoordination,
		"CREATE TABLE IF NOT EXISTS x (a int PRIMARY KEY)":                                    stmtOther,
		"": stmtOther,
	} {
		if got := statementKind(stmt); got != want {
			t.Errorf("statementKind(%q) = %q, want %q", stmt, got, want)
		}
	}
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands(1234567) = %q", got)
	}
}

// TestCassandraStatementsCounted upserts presence halves into the real
// Cassandra and checks, from the session's own count of the statements
// it sent, that a visit completed within a batch, or completed by a half
// this process wrote before, is not read back, that an open visit and a
// visit whose first half an earlier process wrote are, and that the
// cached room_timelines map reads a key it wrote from memory.
func TestCassandraStatementsCounted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	open := cassandraStores(ctx, t, "rpstmts")
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	ev := presenceEvents("room-01", at)
	st := open()
	upsert := func(st *cassandraStore, wantUpserts, wantReads uint64, wantComplete int, events ...room.Event) {
		t.Helper()
		before := st.Statements().ByKind
		rows, err := st.Upsert(ctx, events)
		if err != nil {
			t.Fatal(err)
		}
		after := st.Statements().ByKind
		ups, reads := after[stmtPresenceUpsert]-before[stmtPresenceUpsert], after[stmtPresenceRead]-before[stmtPresenceRead]
		complete := 0
		for _, r := range rows {
			if r.Complete() {
				complete++
			}
		}
		if ups != wantUpserts || reads != wantReads || complete != wantComplete {
			t.Fatalf("upsert of %d events: %d upserts, %d reads, %d complete rows; want %d, %d, %d",
				len(events), ups, reads, complete, wantUpserts, wantReads, wantComplete)
		}
	}
	// v1 opens; v2 enters and leaves in one batch: one UPDATE each, v1
	// read back (open), v2 complete as written.
	upsert(st, 2, 1, 1, ev("v1", room.Enter, 0), ev("v2", room.Enter, 1), ev("v2", room.Leave, 30))
	// v1 leaves: its ENTER was written by this process, no read.
	upsert(st, 1, 0, 1, ev("v1", room.Leave, 40))
	// v3 leaves before it enters (out of order), then enters.
	upsert(st, 1, 1, 0, ev("v3", room.Leave, 50))
	upsert(st, 1, 0, 1, ev("v3", room.Enter, 45))
	// v4 enters here; a new process (restart) writes its LEAVE and must
	// read the row back to find it complete.
	upsert(st, 1, 1, 0, ev("v4", room.Enter, 2))
	restarted := open()
	upsert(restarted, 1, 1, 1, ev("v4", room.Leave, 20))
	// Replaying the batch in the restarted process: still complete.
	upsert(restarted, 1, 1, 1, ev("v4", room.Leave, 20))

	// room_timelines through the cache: the first batch reads the
	// absent key and writes it, the next batches read it from memory.
	m, err := cachedBacking(st.Timelines(), 16)(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	timelines := opaque.New[room.Timeline](m, state.MapOptions[room.Timeline]{Name: timelineMap})
	key := state.MustKey("room-01", at.Unix())
	counts := func() (writes, reads uint64) {
		by := st.Statements().ByKind
		return by[stmtTimelineWrite], by[stmtTimelineRead]
	}
	w0, r0 := counts()
	for txid := txn.TxID(1); txid <= 3; txid++ {
		if err := timelines.BeginCommit(ctx, txid); err != nil {
			t.Fatal(err)
		}
		if err := timelines.MultiPut(ctx, []state.Key{key}, []room.Timeline{{Entries: int64(txid)}}); err != nil {
			t.Fatal(err)
		}
		if err := timelines.Commit(ctx, txid); err != nil {
			t.Fatal(err)
		}
	}
	got, err := timelines.MultiGet(ctx, []state.Key{key})
	if err != nil || !got[0].Found || got[0].Val.Entries != 3 {
		t.Fatalf("MultiGet: %+v, %v", got, err)
	}
	if w, r := counts(); w-w0 != 3 || r-r0 != 1 {
		t.Fatalf("3 batches and a read through the cache: %d timeline writes, %d reads; want 3, 1", w-w0, r-r0)
	}
	after := st.Statements()
	if after.Requests == 0 || after.Total() < after.ByKind[stmtPresenceUpsert] {
		t.Fatalf("counts: %+v", after)
	}
	t.Logf("%s", after.describe(0))
}

// TestStatementCountsDescribe renders the counts per event.
func TestStatementCountsDescribe(t *testing.T) {
	s := statementCounts{ByKind: map[string]uint64{stmtPresenceUpsert: 1500, stmtPresenceRead: 500}, Requests: 2000}
	want := "2,000 statements (2.000 per event; 2,000 requests, 0 batches): presence upsert 1,500 (1.500), presence read 500 (0.500)"
	if got := s.describe(1000); got != want {
		t.Errorf("describe:\n got %s\nwant %s", got, want)
	}
	if got, want := s.describe(0), "2,000 statements (2,000 requests, 0 batches): presence upsert 1,500, presence read 500"; got != want {
		t.Errorf("describe without events:\n got %s\nwant %s", got, want)
	}
}

// TestCassandraPresenceGrouped: with presence-batch 4, the UPDATEs go in
// unlogged batches of up to 4 and the read-backs in SELECT ... IN of up to
// 4 visits, and the rows come back as stored: a visit an earlier process
// opened is found complete, the open ones are not.
func TestCassandraPresenceGrouped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	open := cassandraStores(ctx, t, "rpgroup")
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	ev := presenceEvents("room-02", at)
	earlier := open()
	if _, err := earlier.Upsert(ctx, []room.Event{ev("w", room.Enter, 0)}); err != nil {
		t.Fatal(err)
	}
	st := open()
	st.batch = 4
	events := []room.Event{ev("w", room.Leave, 30)}
	for _, v := range []string{"v1", "v2", "v3", "v4", "v5"} {
		events = append(events, ev(v, room.Enter, 5))
	}
	before := st.Statements()
	rows, err := st.Upsert(ctx, events)
	if err != nil {
		t.Fatal(err)
	}
	after := st.Statements()
	ups := after.ByKind[stmtPresenceUpsert] - before.ByKind[stmtPresenceUpsert]
	reads := after.ByKind[stmtPresenceRead] - before.ByKind[stmtPresenceRead]
	batches, requests := after.Batches-before.Batches, after.Requests-before.Requests
	if ups != 6 || batches != 2 || reads != 2 || requests != 4 {
		t.Fatalf("6 visits in batches of 4: %d upserts in %d batches, %d reads, %d requests; want 6 in 2, 2 reads (IN), 4 requests",
			ups, batches, reads, requests)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	want := room.Period{Visit: "w", Room: "room-02", Person: "p-w", Start: at, End: at.Add(30 * time.Minute)}
	if !rows[0].Equal(want) {
		t.Fatalf("w: %+v, want %+v", rows[0], want)
	}
	for _, r := range rows[1:] {
		if r.Complete() || !r.Start.Equal(at.Add(5*time.Minute)) || r.Room != "room-02" {
			t.Fatalf("open visit read back as %+v", r)
		}
	}
}

// TestPresenceBatchFlag: run refuses a --presence-batch outside 1 to
// maxPresenceBatch before it connects to anything.
func TestPresenceBatchFlag(t *testing.T) {
	for _, n := range []string{"0", "-1", "65"} {
		err := cmdRun(context.Background(), []string{"--kafka", "127.0.0.1:1", "--cassandra", "", "--data", t.TempDir(), "--http", "", "--drpc", "", "--presence-batch", n})
		if err == nil || !strings.Contains(err.Error(), "--presence-batch "+n) {
			t.Errorf("--presence-batch %s: %v", n, err)
		}
	}
}

// cassandraStores returns a function that opens a store over the real
// Cassandra of realServices(name), as a new process would, closed when the
// test ends.
func cassandraStores(ctx context.Context, t *testing.T, name string) func() *cassandraStore {
	o, _ := realServices(ctx, t, name)
	return func() *cassandraStore {
		st, err := o.openStore(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st.(*cassandraStore)
	}
}

// presenceEvents returns a function making the event of kind of visit in
// roomName, minutes after at.
func presenceEvents(roomName string, at time.Time) func(visit string, kind room.Kind, minutes int) room.Event {
	return func(visit string, kind room.Kind, minutes int) room.Event {
		return room.Event{ID: visit + string(kind), Visit: visit, Person: "p-" + visit, Room: roomName, Kind: kind,
			Time: at.Add(time.Duration(minutes) * time.Minute)}
	}
}
