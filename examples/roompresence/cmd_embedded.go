package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/squallstream/squall/spouts/kafka/kafkatest"
)

// cmdEmbedded runs gen, run and verify in one process: on the embedded
// broker and store unless real services are named.
func cmdEmbedded(ctx context.Context, args []string) error {
	var o options
	var g genFlags
	var tasks int
	fs := flag.NewFlagSet("roompresence", flag.ContinueOnError)
	o.register(fs)
	g.register(fs)
	fs.IntVar(&tasks, "tasks", 2, "parallelism of the spout, presence and timeline steps")
	if err := o.parse(fs, args, false); err != nil {
		return err
	}
	if len(o.brokers()) == 0 {
		broker, err := kafkatest.Start(kafkatest.Config{Topics: []string{o.topic, o.dlq}, Partitions: int32(o.partitions)})
		if err != nil {
			return fmt.Errorf("starting the embedded broker: %w", err)
		}
		defer broker.Close()
		o.kafka = broker.Addrs()[0]
		o.sec.plainKafka() // the embedded broker has no SASL or TLS
		fmt.Fprintf(os.Stderr, "embedded Kafka-protocol broker on %s\n", o.kafka)
	}
	if len(o.cassHosts()) == 0 && !flagSet(fs, "data") {
		dir, err := os.MkdirTemp("", "roompresence-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.data = dir
	}
	st, err := o.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(os.Stderr, "results in %s\n", o.describeStore())

	if _, err := generate(ctx, &o, &g, os.Stderr); err != nil {
		return err
	}
	stats, err := runTopology(ctx, runConfig{brokers: o.brokers(), kafkaSec: o.sec.kafka(), store: st, topic: o.topic, dlq: o.dlq, tasks: tasks,
		untilCaughtUp: true, progress: os.Stderr, every: time.Second})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintf(os.Stderr, "run: caught up at txid %d after %v; %d dead letters\n", stats.committed, stats.took.Round(time.Millisecond), stats.deadLettered)
	if err := showBusiestRoom(ctx, st, &g); err != nil {
		return err
	}
	return verify(ctx, &o, st, os.Stdout)
}

// showBusiestRoom prints the day of the room with the most entries.
func showBusiestRoom(ctx context.Context, st Store, g *genFlags) error {
	cfg, err := g.config()
	if err != nil {
		return err
	}
	keys, err := st.TimelineKeys(ctx)
	if err != nil {
		return err
	}
	got, err := readTimelines(ctx, st, keys)
	if err != nil {
		return err
	}
	entries := map[string]int64{}
	for i, k := range keys {
		roomID, hour, err := splitTimelineKey(k)
		if err != nil {
			return err
		}
		if got[i].Found && !hour.Before(cfg.Day) && hour.Before(cfg.Day.Add(24*time.Hour)) {
			entries[roomID] += got[i].Val.Entries
		}
	}
	if len(entries) == 0 {
		return fmt.Errorf("no room has entries on %s", g.day)
	}
	rooms := make([]string, 0, len(entries))
	for r := range entries {
		rooms = append(rooms, r)
	}
	slices.SortFunc(rooms, func(a, b string) int {
		if entries[a] != entries[b] {
			return int(entries[b] - entries[a])
		}
		return strings.Compare(a, b)
	})
	return printDay(ctx, st, rooms[0], cfg.Day, os.Stdout)
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
