package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
)

// genFlags are the flags of a generated day.
type genFlags struct {
	events                int
	people, rooms, visits int
	day                   string
	seed                  uint64
	malformed, outOfOrder float64
}

func (g *genFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.events, "events", 10_000, "about how many events to write (sets --people when that is 0)")
	fs.IntVar(&g.people, "people", 0, "people with a badge (0: from --events)")
	fs.IntVar(&g.rooms, "rooms", 12, "rooms with a reader")
	fs.IntVar(&g.visits, "visits", 10, "average visits per person")
	fs.StringVar(&g.day, "day", "2026-01-05", "the day, YYYY-MM-DD (UTC)")
	fs.Uint64Var(&g.seed, "seed", 1, "random seed: the same seed writes the same events")
	fs.Float64Var(&g.malformed, "malformed", 0.001, "share of extra records that are malformed")
	fs.Float64Var(&g.outOfOrder, "out-of-order", 0.05, "share of visits whose LEAVE is written before their ENTER")
}

func (g *genFlags) config() (room.GenConfig, error) {
	day, err := time.Parse(time.DateOnly, g.day)
	if err != nil {
		return room.GenConfig{}, fmt.Errorf("--day %q: want YYYY-MM-DD", g.day)
	}
	if g.visits < 1 || g.rooms < 1 || g.events < 0 || g.people < 0 {
		return room.GenConfig{}, fmt.Errorf("--events, --people, --rooms and --visits must be positive")
	}
	people := g.people
	if people == 0 {
		people = max(g.events/(2*g.visits), 1)
	}
	cfg := room.GenConfig{People: people, Rooms: g.rooms, VisitsPerPerson: g.visits, Day: day, Seed: g.seed,
		Malformed: g.malformed, OutOfOrder: g.outOfOrder}
	return cfg, cfg.Validate()
}

func cmdGen(ctx context.Context, args []string) error {
	var o options
	var g genFlags
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	o.register(fs)
	g.register(fs)
	if err := o.parse(fs, args, true); err != nil {
		return err
	}
	_, err := generate(ctx, &o, &g, os.Stderr)
	return err
}

// generate creates the topics and writes a generated day to the events
// topic, drawing a progress bar on w.
func generate(ctx context.Context, o *options, g *genFlags, w io.Writer) (int, error) {
	cfg, err := g.config()
	if err != nil {
		return 0, err
	}
	gen, err := room.NewGenerator(cfg)
	if err != nil {
		return 0, err
	}
	kio, err := newKafkaIO(o.brokers(), o.sec.kafka())
	if err != nil {
		return 0, err
	}
	defer kio.Close()
	if err := kio.ensureTopics(ctx, o.partitions, o.topic, o.dlq); err != nil {
		return 0, err
	}
	total, start := gen.Estimate(), time.Now()
	n, err := kio.produce(ctx, o.topic, gen, func(written int) { drawBar(w, "gen", written, total) })
	fmt.Fprintf(w, "\ngen: wrote %d records to %s in %v (%d people, %d rooms, day %s, seed %d)\n",
		n, o.topic, time.Since(start).Round(time.Millisecond), cfg.People, cfg.Rooms, g.day, cfg.Seed)
	return n, err
}

// drawBar redraws a one-line progress bar.
func drawBar(w io.Writer, label string, done, total int) {
	const width = 40
	frac := 1.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
	}
	filled := int(frac * width)
	fmt.Fprintf(w, "\r%s [%s%s] %3.0f%% %d records", label, strings.Repeat("#", filled), strings.Repeat(".", width-filled), frac*100, done)
}
