package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/state"
)

func cmdQuery(ctx context.Context, args []string) error {
	var o options
	var roomID, day, drpcURL string
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	o.register(fs)
	fs.StringVar(&roomID, "room", "", "the room, e.g. room-03 (required)")
	fs.StringVar(&day, "day", "2026-01-05", "the day, YYYY-MM-DD (UTC)")
	fs.StringVar(&drpcURL, "drpc", "", "ask the running topology over DRPC at this URL (printed by run) instead of reading the store")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return fmt.Errorf("--day %q: want YYYY-MM-DD", day)
	}
	if roomID == "" {
		return fmt.Errorf("query needs --room")
	}
	if drpcURL != "" {
		return askDay(ctx, drpcURL, roomID, d, os.Stdout)
	}
	st, err := o.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return printDay(ctx, st, roomID, d, os.Stdout)
}

// printDay prints the hourly occupancy of a room for a UTC day.
func printDay(ctx context.Context, st Store, roomID string, day time.Time, w io.Writer) error {
	keys := make([]state.Key, 24)
	for h := range keys {
		keys[h] = timelineKey(roomID, day.Add(time.Duration(h)*time.Hour))
	}
	got, err := readTimelines(ctx, st, keys)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s on %s (UTC)\n", roomID, day.Format(time.DateOnly))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "hour\tentries\tvisits\tpeak\tperson-minutes\t")
	var total room.Timeline
	for h, e := range got {
		if !e.Found {
			continue
		}
		total = total.Merge(room.Timeline{Entries: e.Val.Entries})
		fmt.Fprintf(tw, "%02d:00\t%d\t%d\t%d\t%d\t\n", h, e.Val.Entries, len(e.Val.Visits), e.Val.Peak(), e.Val.PersonMinutes())
	}
	fmt.Fprintf(tw, "day\t%d\t\t\t\t\n", total.Entries)
	return tw.Flush()
}
