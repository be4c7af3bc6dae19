package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/state/cassandra"
)

// TestRebuildRepairsABug replays everything against real Kafka and
// Cassandra: a topology with a bug (every ENTER counted twice) writes
// version 1 and verify finds mismatches; rebuild builds version 2 from
// the start of the topic with the fixed code while the buggy live
// topology keeps its tables, verifies it and switches readers, after
// which verify (reading through the pointer) finds none; rebuild
// --drop-old then drops version 1's tables.
func TestRebuildRepairsABug(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	o, kio := realServices(ctx, t, "rb")
	name := o.keyspace
	gen := generator(t, genFlags{events: 4000, rooms: 6, visits: 6, day: "2026-01-05", seed: 11, malformed: 0.002, outOfOrder: 0.05})
	half := gen.Estimate() / 2
	if _, err := kio.produceN(ctx, o.topic, gen, half, func(int) {}); err != nil {
		t.Fatal(err)
	}

	// Version 1, with the bug, live: it keeps running (and reading the
	// second half of the events) while the rebuild runs.
	live, err := o.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if live.Version() != 1 {
		t.Fatalf("a fresh keyspace reads version %d, want 1", live.Version())
	}
	liveCtx, stopLive := context.WithCancel(ctx)
	liveDone := make(chan error, 1)
	go func() {
		_, err := runTopology(liveCtx, runConfig{brokers: o.brokers(), store: live, topic: o.topic, dlq: o.dlq, tasks: 2, bug: true})
		liveDone <- err
	}()
	defer func() { stopLive(); <-liveDone }()
	kcfg := runConfig{brokers: o.brokers(), store: live, topic: o.topic}.spoutConfig(nil)
	waitMirrored := func(what string, group string, cond func(map[int]int64) bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			offs, err := kafka.MirroredOffsets(ctx, kcfg, group, o.topic)
			if err == nil && cond(offs) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v, %v", what, offs, err)
			}
			time.Sleep(200 * time.Millisecond) // the mirror commits every few hundred milliseconds; no event to wait on
		}
	}
	waitMirrored("the live topology's first commits", topologyName, func(m map[int]int64) bool {
		var n int64
		for _, o := range m {
			n += max(o, 0)
		}
		return n > 0
	})
	if _, err := kio.produceN(ctx, o.topic, gen, -1, func(int) {}); err != nil {
		t.Fatal(err)
	}

	// The rebuild, with the fixed code, while the live one runs on.
	var out bytes.Buffer
	if err := rebuild(ctx, &o, 2, &out); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out.String())
	}
	t.Logf("rebuild:\n%s", out.String())
	select {
	case err := <-liveDone:
		t.Fatalf("the live topology stopped during the rebuild: %v", err)
	default:
	}
	stopLive()
	<-liveDone
	liveDone <- nil // for the deferred stop
	out.Reset()
	if err := verify(ctx, &o, live, &out); !errors.Is(err, errMismatch) {
		t.Fatalf("verify of the buggy live version = %v, want mismatches:\n%s", err, out.String())
	}
	out.Reset()
	st, err := o.openStore(ctx) // the version readers use
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Version() != 2 {
		t.Fatalf("readers use version %d after the rebuild, want 2", st.Version())
	}
	if err := verify(ctx, &o, st, &out); err != nil || !strings.Contains(out.String(), "verify: 0 mismatches") {
		t.Fatalf("verify after the switch: %v\n%s", err, out.String())
	}

	// The old tables go.
	out.Reset()
	if err := dropOldVersions(ctx, &o, &out); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"presence", timelineMap} {
		if !strings.Contains(out.String(), "dropped "+name+"."+table+"\n") {
			t.Fatalf("drop-old did not drop %s:\n%s", table, out.String())
		}
		q := st.(*cassandraStore).s.Statement(ctx, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?", name, table)
		var got string
		if err := q.Scan(&got); err == nil {
			t.Fatalf("table %s still exists", table)
		}
	}
	if _, err := st.(*cassandraStore).s.Statement(ctx, "SELECT count(*) FROM "+name+"."+cassandra.VersionedName(timelineMap, 2)).Iter().SliceMap(); err != nil {
		t.Fatalf("version 2's timelines after drop-old: %v", err)
	}
}
