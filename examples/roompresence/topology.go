package main

import (
	"context"
	"fmt"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/txn"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// Field names of the pipeline's streams.
const (
	fieldEvent  = "event"  // a decoded room.Event
	fieldVisit  = "visit"  // the event's visit id
	fieldPeriod = "period" // a complete room.Period
	fieldRoom   = "room"
	fieldHour   = "hour"  // the hour's start, Unix seconds (a stable state key)
	fieldPiece  = "piece" // a room.Timeline contribution
	timelineMap = "room_timelines"
)

// Presence is the presence table: one row per visit, saved by visit id.
type Presence interface {
	// Upsert applies each event to its visit's row (an ENTER sets the
	// start, a LEAVE the end, whatever the order) and returns the rows of
	// the visits touched, as stored after the writes. Applying an event
	// again changes nothing.
	Upsert(ctx context.Context, events []room.Event) ([]room.Period, error)
}

// Injector injects faults for the chaos command and tests: it is called
// at named points of the pipeline and may return an error (a retryable
// one replays the batch) or panic (the worker restarts).
type Injector interface {
	Inject(ctx context.Context, where string) error
}

// pipeline describes the room-presence topology over a stream of decoded
// events (fields visit and event).
type pipeline struct {
	presence  Presence
	timelines trident.BackingFactory
	faults    Injector     // nil: none
	tasks     int          // parallelism of the presence and timeline steps
	drpc      *drpc.Server // serves the DRPC function drpcTimeline; nil: none
	// bug counts every ENTER twice in the timelines: a bug that corrupts
	// results, for the rebuild command's demonstration and test.
	bug bool
}

// build adds the pipeline to t, reading events:
//
//	events ─┬─ PartitionBy(visit) ─ PartitionPersist(presence) ─▶ complete periods ─ split by hour ─┐
//	        └─ ENTER events ─ one entry in their hour ─────────────────────────────────────────────┴─ Merge ─ GroupBy(room, hour) ─ PersistentAggregate(room_timelines, opaque)
func (p pipeline) build(t *trident.Topology, events *trident.Stream) *trident.State[state.MapState[room.Timeline]] {
	tasks := max(p.tasks, 1)
	// The values that cross worker processes when the topology runs
	// across several (the cluster command with --workers above 1).
	trident.JSONValueType[room.Event](t, trident.MinValueTypeID)
	trident.JSONValueType[room.Period](t, trident.MinValueTypeID+1)
	trident.JSONValueType[room.Timeline](t, trident.MinValueTypeID+2)
	periods := trident.PartitionPersist(events.PartitionBy(fieldVisit).Parallelism(tasks),
		func(context.Context, int, int) (*presenceState, error) { return &presenceState{p.presence}, nil },
		trident.Fields{fieldEvent}, trident.StateUpdater[*presenceState](presenceUpdater{p.faults}), fieldPeriod).NewValuesStream()
	visitPieces := periods.FlatMap(trident.FlatMapFunctionFunc(splitByHour), fieldRoom, fieldHour, fieldPiece)
	pieceOf := entryPiece
	if p.bug {
		pieceOf = doubledEntryPiece
	}
	entries := events.Filter(trident.FilterFunc(isEnter)).Map(trident.MapFunctionFunc(pieceOf), fieldRoom, fieldHour, fieldPiece)
	merged := t.Merge(visitPieces, entries)
	if p.faults != nil {
		merged = merged.Filter(trident.FilterFunc(func(ctx context.Context, _ trident.Tuple) (bool, error) {
			return true, p.faults.Inject(ctx, "timeline")
		}))
	}
	timelines := trident.PersistentAggregate(merged.GroupBy(fieldRoom, fieldHour).Parallelism(tasks),
		trident.Opaque[room.Timeline](timelineMap, cachedBacking(p.timelines, timelineCacheSize)), trident.Fields{fieldPiece}, timelineAgg{}, "timeline")
	if p.drpc != nil {
		serveTimelines(t, p.drpc, timelines)
	}
	return timelines
}

// presenceState is the PartitionPersist state over the presence table. An
// upsert needs no transaction bracket: writing a batch again writes the
// same rows.
type presenceState struct{ table Presence }

func (*presenceState) BeginCommit(context.Context, txn.TxID) error { return nil }
func (*presenceState) Commit(context.Context, txn.TxID) error      { return nil }

// presenceUpdater upserts a batch's events and emits every touched visit
// whose row is complete after the write. That depends only on the stored
// rows, so a replay of the batch emits the same periods; a visit touched
// again later (a duplicated record) is emitted again, which the
// timeline's set of visits absorbs.
type presenceUpdater struct{ faults Injector }

func (u presenceUpdater) UpdateState(ctx context.Context, st *presenceState, tuples []trident.Tuple, out trident.Collector) error {
	events := make([]room.Event, len(tuples))
	for i, t := range tuples {
		events[i] = t.Get(fieldEvent).(room.Event)
	}
	if u.faults != nil {
		if err := u.faults.Inject(ctx, "presence"); err != nil {
			return err
		}
	}
	rows, err := st.table.Upsert(ctx, events)
	if err != nil {
		return fmt.Errorf("presence upsert of %d events: %w", len(events), err)
	}
	for _, p := range rows {
		if p.Complete() {
			out.Emit(p)
		}
	}
	return nil
}

func splitByHour(_ context.Context, t trident.Tuple, out trident.Collector) error {
	for _, pc := range t.Get(fieldPeriod).(room.Period).Pieces() {
		out.Emit(pc.Room, pc.Hour.Unix(), pc.Timeline)
	}
	return nil
}

func isEnter(_ context.Context, t trident.Tuple) (bool, error) {
	return t.Get(fieldEvent).(room.Event).Kind == room.Enter, nil
}

func entryPiece(_ context.Context, t trident.Tuple) ([]any, error) {
	pc := room.EntryPiece(t.Get(fieldEvent).(room.Event))
	return []any{pc.Room, pc.Hour.Unix(), pc.Timeline}, nil
}

// doubledEntryPiece is entryPiece with the injected bug: the ENTER counts
// twice.
func doubledEntryPiece(ctx context.Context, t trident.Tuple) ([]any, error) {
	pc := room.EntryPiece(t.Get(fieldEvent).(room.Event))
	pc.Timeline.Entries *= 2
	return []any{pc.Room, pc.Hour.Unix(), pc.Timeline}, nil
}

// timelineAgg combines timeline contributions into a room's hour. It is
// pure: Combine builds a new timeline.
type timelineAgg struct{}

func (timelineAgg) Init(t trident.Tuple) (room.Timeline, error) {
	return t.Get(fieldPiece).(room.Timeline), nil
}
func (timelineAgg) Combine(a, b room.Timeline) room.Timeline { return a.Merge(b) }
func (timelineAgg) Zero() room.Timeline                      { return room.Timeline{} }

// timelineKey is the state key of a room's hour.
func timelineKey(roomID string, hour time.Time) state.Key {
	return state.MustKey(roomID, hour.Unix())
}

// splitTimelineKey returns the room and hour of a timeline key. Decoded
// keys hold the hour as the smallest integer type that fits.
func splitTimelineKey(k state.Key) (string, time.Time, error) {
	v := k.Values()
	if len(v) == 2 {
		roomID, ok := v[0].(string)
		if secs, isInt := asInt64(v[1]); ok && isInt {
			return roomID, time.Unix(secs, 0).UTC(), nil
		}
	}
	return "", time.Time{}, fmt.Errorf("%s key %v is not (room, hour)", timelineMap, k)
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return int64(n), n <= 1<<63-1
	}
	return 0, false
}
