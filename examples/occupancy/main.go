// Command occupancy shows Trident windows: badge readers report people
// entering and leaving rooms (the events of examples/roompresence), and
// squall counts, per room, the people seen at its door in sliding
// 15-minute windows every minute, on the events' own time with two
// minutes of allowed lateness. Each window fires once, exactly, through
// replays: its result is stored with the batch that fired it.
//
//	go run ./examples/occupancy                    # windows in memory
//	go run ./examples/occupancy -dir /tmp/occupancy # windows and coordinator in bbolt files
//
// The windows' records are keyed by txid, so with -dir the coordination
// store is a bbolt file next to them: a second run resumes after the last
// committed batch instead of starting again at txid 1.
//
// It prints each room's busiest window.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/trident"
	"github.com/squallstream/squall/trident/coordstore/boltstore"
	"github.com/squallstream/squall/trident/windowstore"
	"github.com/squallstream/squall/trident/windowstore/boltwindows"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "occupancy:", err)
		os.Exit(1)
	}
}

func run() error {
	people := flag.Int("people", 100, "people with a badge")
	rooms := flag.Int("rooms", 6, "rooms with a reader")
	seed := flag.Uint64("seed", 1, "generator seed")
	batch := flag.Int("batch", 200, "events per batch")
	dir := flag.String("dir", "", "directory of the bbolt files of the windows and the coordinator (default: in memory)")
	flag.Parse()

	batches, _, err := Events(room.GenConfig{People: *people, Rooms: *rooms, Seed: *seed, NightShift: -1}, *batch)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cfg := trident.Config{BatchEmitInterval: time.Millisecond}
	var store trident.WindowsStore = windowstore.NewMemory()
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return err
		}
		bs, err := boltwindows.Open(filepath.Join(*dir, "windows.db"), boltwindows.Options{})
		if err != nil {
			return err
		}
		defer bs.Close()
		store = bs
		cs, err := boltstore.Open(ctx, filepath.Join(*dir, "coordinator.db"), boltstore.Options{})
		if err != nil {
			return err
		}
		defer cs.Close()
		cfg.Store = cs
	}
	windows, err := Run(ctx, batches, store, 2, cfg)
	if err != nil {
		return err
	}
	busiest := map[string]Occupancy{}
	var order []string
	for _, o := range windows {
		b, ok := busiest[o.Room]
		if !ok {
			order = append(order, o.Room)
		}
		if !ok || o.People > b.People {
			busiest[o.Room] = o
		}
	}
	fmt.Printf("%d batches, %d windows fired in this run\n", len(batches), len(windows))
	for _, r := range order {
		fmt.Println("busiest:", busiest[r])
	}
	return nil
}
