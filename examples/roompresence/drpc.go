package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// drpcTimeline is the DRPC function of the room's hourly table: its
// arguments are "ROOM YYYY-MM-DD", its rows (hour, entries, visits, peak,
// person-minutes) for every hour of that UTC day with a timeline.
const drpcTimeline = "timeline"

// Fields of the DRPC query's rows.
var timelineRowFields = []string{"hour", "entries", "visits", "peak", "person_minutes"}

// serveTimelines adds the DRPC function drpcTimeline to t, reading the
// committed timelines from their own tasks.
func serveTimelines(t *trident.Topology, server *drpc.Server, timelines *trident.State[state.MapState[room.Timeline]]) {
	hours := t.NewDRPCStream(drpcTimeline, server).FlatMap(trident.FlatMapFunctionFunc(dayHours), fieldRoom, fieldHour)
	rows := trident.StateQuery(hours, timelines, trident.Fields{fieldRoom, fieldHour}, timelineGet{}, timelineRowFields[1:]...)
	trident.ReturnResults(rows, drpcTimeline, timelineRowFields...)
}

// serveDRPC serves s's functions over HTTP on addr until stop, with the
// connection budgets of s's Config (drpc.Server.HTTPServer).
func serveDRPC(s *drpc.Server, addr string) (stop func(), url string, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--drpc: %w", err)
	}
	// Host allowlist and cross-origin protection; callers on loopback
	// only (no Authenticator: see drpc.GuardConfig).
	h, err := s.Guarded(drpc.GuardConfig{})
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	srv := s.HTTPServer(h)
	go srv.Serve(ln)
	return func() { srv.Close() }, "http://" + ln.Addr().String(), nil
}

// askDay asks the running topology for a room's day over DRPC and prints
// it as printDay does.
func askDay(ctx context.Context, url, roomID string, day time.Time, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+"/drpc/"+drpcTimeline,
		strings.NewReader(roomID+" "+day.Format(time.DateOnly)))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e drpc.ErrorBody
		json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("drpc %s: %s (%s)", drpcTimeline, e.Error, resp.Status)
	}
	var res struct {
		Rows [][]int64 `json:"rows"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return fmt.Errorf("drpc %s: %w", drpcTimeline, err)
	}
	slices.SortFunc(res.Rows, func(a, b []int64) int { return cmp.Compare(a[0], b[0]) })
	fmt.Fprintf(w, "%s on %s (UTC), over DRPC\n", roomID, day.Format(time.DateOnly))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "hour\tentries\tvisits\tpeak\tperson-minutes\t")
	var entries int64
	for _, r := range res.Rows {
		if len(r) != len(timelineRowFields) {
			return fmt.Errorf("drpc %s: a row of %d values, want %d", drpcTimeline, len(r), len(timelineRowFields))
		}
		entries += r[1]
		fmt.Fprintf(tw, "%02d:00\t%d\t%d\t%d\t%d\t\n", time.Unix(r[0], 0).UTC().Hour(), r[1], r[2], r[3], r[4])
	}
	fmt.Fprintf(tw, "day\t%d\t\t\t\t\n", entries)
	return tw.Flush()
}

// parseDayArgs reads "ROOM YYYY-MM-DD".
func parseDayArgs(args string) (string, time.Time, error) {
	f := strings.Fields(args)
	if len(f) != 2 {
		return "", time.Time{}, fmt.Errorf("want \"ROOM YYYY-MM-DD\", got %q", args)
	}
	day, err := time.Parse(time.DateOnly, f[1])
	if err != nil {
		return "", time.Time{}, fmt.Errorf("day %q: want YYYY-MM-DD", f[1])
	}
	return f[0], day, nil
}

// dayHours emits the 24 (room, hour) keys of the request's day. Bad
// arguments give no hour, hence an empty result.
func dayHours(_ context.Context, t trident.Tuple, out trident.Collector) error {
	roomID, day, err := parseDayArgs(t.String("args"))
	if err != nil {
		out.ReportError(fmt.Errorf("drpc %s: %w", drpcTimeline, err))
		return nil
	}
	for h := range 24 {
		out.Emit(roomID, day.Add(time.Duration(h)*time.Hour).Unix())
	}
	return nil
}

// timelineGet reads the timelines of (room, hour) keys; hours without one
// give no row.
type timelineGet struct{}

func (timelineGet) BatchRetrieve(ctx context.Context, ms state.MapState[room.Timeline], args []trident.Tuple) ([]state.Entry[room.Timeline], error) {
	keys := make([]state.Key, len(args))
	for i, a := range args {
		keys[i] = state.MustKey(a.Get(fieldRoom), a.Get(fieldHour))
	}
	return ms.MultiGet(ctx, keys)
}

func (timelineGet) Execute(_ context.Context, _ trident.Tuple, e state.Entry[room.Timeline], out trident.Collector) error {
	if e.Found {
		out.Emit(e.Val.Entries, int64(len(e.Val.Visits)), int64(e.Val.Peak()), int64(e.Val.PersonMinutes()))
	}
	return nil
}
