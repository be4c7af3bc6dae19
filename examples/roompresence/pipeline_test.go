package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
)

// TestPipelineExactlyOnce runs the topology over an in-memory opaque
// source holding a generated day (with out-of-order pairs) while faults
// are injected into the presence and timeline steps, and checks the
// embedded store against the expected results exactly.
func TestPipelineExactlyOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src, want, n := generatedSource(t, room.GenConfig{People: 60, Rooms: 5, VisitsPerPerson: 8, Seed: 3, OutOfOrder: 0.2, NightShift: 0.3}, 3, 200)
	st, err := openEmbedded(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	faults := newRandomFaults(11, 0.02, 0.01, 30)
	tt := trident.NewTopology("roompresence")
	events := decodedEvents(tt, src)
	queries := drpc.NewServer(drpc.Config{})
	stopDRPC, url, err := serveDRPC(queries, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stopDRPC()
	pipeline{presence: st, timelines: st.Timelines(), faults: faults, tasks: 2, drpc: queries}.build(tt, events)

	cluster := topology.NewLocalCluster()
	defer cluster.Shutdown(context.Background())
	cfg := trident.Config{}
	cfg.Store = st.Coordination()
	cfg.Topology.RestartMinBackoff = time.Millisecond
	cfg.Cluster = cluster
	r, err := tt.Submit(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the store matches, then let a few more batches commit
	// and check that it still does: nothing counted twice later.
	waitForStore(ctx, t, r, st, want, 20*time.Second)
	if err := r.WaitCommitted(ctx, r.Committed()+3); err != nil {
		t.Fatal(err)
	}
	if d, err := compareStore(ctx, st, want); err != nil || d.total() != 0 {
		t.Fatalf("after more commits: %v, %v", d, err)
	}
	// The DRPC query reads the same hourly table as the store does. A
	// request whose batch an injected fault failed gets the failure: ask
	// again.
	for k := range want.Timelines {
		day := k.Hour.Truncate(24 * time.Hour)
		var viaStore, viaDRPC bytes.Buffer
		if err := printDay(ctx, st, k.Room, day, &viaStore); err != nil {
			t.Fatal(err)
		}
		var err error
		for range 10 {
			viaDRPC.Reset()
			if err = askDay(ctx, url, k.Room, day, &viaDRPC); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("asking %s over DRPC: %v", k.Room, err)
		}
		body := func(b bytes.Buffer) string { _, rest, _ := strings.Cut(b.String(), "\n"); return rest }
		if body(viaDRPC) != body(viaStore) {
			t.Fatalf("over DRPC:\n%s\nfrom the store:\n%s", viaDRPC.String(), viaStore.String())
		}
		t.Logf("over DRPC:\n%s", viaDRPC.String())
		break
	}
	retries, panics := faults.counts()
	if retries == 0 || panics == 0 {
		t.Fatalf("injected %d retryable failures and %d panics; want some of each", retries, panics)
	}
	t.Logf("%d records, %d visits, %d room hours; %d retryable failures and %d panics injected",
		n, len(want.Periods), len(want.Timelines), retries, panics)
}

// generatedSource returns an in-memory source holding a generated day of
// events spread over the given number of partitions, batches of at most
// maxBatch records, the results they should produce, and the number of
// records.
func generatedSource(t *testing.T, gc room.GenConfig, partitions, maxBatch int) (*spouttest.Source, *room.Expected, int) {
	t.Helper()
	names := make([]spout.Partition, partitions)
	for i := range names {
		names[i] = spout.Partition(fmt.Sprintf("p%d", i))
	}
	src := spouttest.NewSource(names...)
	src.SetMaxBatch(maxBatch)
	g, err := room.NewGenerator(gc)
	if err != nil {
		t.Fatal(err)
	}
	want := room.NewExpected()
	var n int
	for {
		r, ok := g.Next()
		if !ok {
			break
		}
		e, _ := room.Decode(r.Value)
		want.Add(e)
		src.Append(names[n%partitions], string(r.Value))
		n++
	}
	want.Finish()
	return src, want, n
}

// decodedEvents returns the stream of src's events decoded, as run's
// topology reads them from Kafka.
func decodedEvents(tt *trident.Topology, src *spouttest.Source) *trident.Stream {
	raw := tt.NewStream("room-events", trident.OpaqueSource(trident.Fields{"partition", "offset", "value"}, src.Lister,
		func(int) spout.Emitter[spouttest.Offsets] { return src.Emitter() }))
	return raw.Map(trident.MapFunctionFunc(func(_ context.Context, tu trident.Tuple) ([]any, error) {
		e, err := room.Decode([]byte(tu.String("value")))
		return []any{e.Visit, e}, err
	}), fieldVisit, fieldEvent)
}

// waitForStore polls until st holds exactly want, failing the test if r
// halts or the store still differs after within.
func waitForStore(ctx context.Context, t *testing.T, r *trident.Running, st Store, want *room.Expected, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		d, err := compareStore(ctx, st, want)
		if err != nil {
			t.Fatal(err)
		}
		if d.total() == 0 {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("after %v: %v\ncommitted %d, errors: %v", within, d, r.Committed(), r.Errors())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
