package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/state/cassandra"
)

// Replaying everything. A bug that corrupted the stored results is fixed
// in the code; rebuild then runs the fixed topology from the start of the
// events topic, under the next version (its own coordination state, spout
// id and mirror group), into new tables (presence_vN, room_timelines_vN),
// while the live topology keeps writing the version readers use. Once the
// rebuild has caught up with the live topology (kafka.CaughtUp on their
// mirror groups) and verify finds no mismatch in its tables, the version
// pointer (cassandra.Versions) moves every reader to it in one step.
// Restarting run then carries on with the new version from where the
// rebuild stopped; rebuild --drop-old finally drops the older tables.

// rebuildAttempts bounds the catch-up rounds with a live topology that
// keeps moving.
const rebuildAttempts = 5

func cmdRebuild(ctx context.Context, args []string) error {
	var o options
	var tasks int
	var dropOld bool
	fs := flag.NewFlagSet("rebuild", flag.ContinueOnError)
	o.register(fs)
	fs.IntVar(&tasks, "tasks", 2, "parallelism of the rebuilding topology's steps")
	fs.BoolVar(&dropOld, "drop-old", false, "only drop the tables of the versions before the one readers use (once the live run was restarted on it)")
	if err := o.parse(fs, args, !dropOld); err != nil {
		return err
	}
	if len(o.cassHosts()) == 0 {
		return errors.New("rebuild needs Cassandra (--cassandra): the embedded store keeps one version of the results")
	}
	if dropOld {
		return dropOldVersions(ctx, &o, os.Stdout)
	}
	return rebuild(ctx, &o, tasks, os.Stdout)
}

// rebuild builds the next version of the results and switches readers to
// it; see the comment at the top of this file.
func rebuild(ctx context.Context, o *options, tasks int, w io.Writer) error {
	cfg, err := o.cassandraConfig()
	if err != nil {
		return err
	}
	cur, err := openCassandra(ctx, cfg, o.replication, 0)
	if err != nil {
		return err
	}
	from := cur.Version()
	cur.Close()
	to := from + 1
	st, err := openCassandra(ctx, cfg, o.replication, to)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(w, "rebuild: readers use version %d; building version %d from the start of %s\n", from, to, o.topic)

	rc := runConfig{brokers: o.brokers(), kafkaSec: o.sec.kafka(), store: st, topic: o.topic, dlq: o.dlq, tasks: tasks,
		untilCaughtUp: true, progress: w, every: 5 * time.Second}
	kcfg := rc.spoutConfig(nil)
	caughtUp := false
	for range rebuildAttempts {
		if _, err := runTopology(ctx, rc); err != nil {
			return fmt.Errorf("rebuild: running version %d: %w", to, err)
		}
		live, err := kafka.MirroredOffsets(ctx, kcfg, cassandra.VersionedName(topologyName, from), o.topic)
		if err != nil {
			return err
		}
		built, err := kafka.MirroredOffsets(ctx, kcfg, cassandra.VersionedName(topologyName, to), o.topic)
		if err != nil {
			return err
		}
		var behind map[int]int64
		if caughtUp, behind = kafka.CaughtUp(built, live); caughtUp {
			break
		}
		fmt.Fprintf(w, "rebuild: the live topology moved on (behind it by partition: %v); catching up again\n", behind)
	}
	if !caughtUp {
		return fmt.Errorf("rebuild: version %d did not catch up with the live topology in %d rounds; run rebuild again: it carries on", to, rebuildAttempts)
	}
	vo := *o
	vo.version = to
	if err := verify(ctx, &vo, st, w); err != nil {
		return fmt.Errorf("rebuild: version %d does not verify, readers stay on version %d: %w", to, from, err)
	}
	v, err := cassandra.OpenVersions(ctx, st.s)
	if err != nil {
		return err
	}
	if err := v.Switch(ctx, topologyName, from, to); err != nil {
		return fmt.Errorf("rebuild: switching readers to version %d: %w", to, err)
	}
	fmt.Fprintf(w, "rebuild: readers now use version %d. Stop the live run and start run again: it carries on with version %d; "+
		"then rebuild --drop-old drops version %d's tables.\n", to, to, from)
	return nil
}

// dropOldVersions drops the result tables of the versions before the one
// readers use.
func dropOldVersions(ctx context.Context, o *options, w io.Writer) error {
	cfg, err := o.cassandraConfig()
	if err != nil {
		return err
	}
	st, err := openCassandra(ctx, cfg, o.replication, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	for v := 1; v < st.Version(); v++ {
		for _, table := range []string{cassandra.VersionedName("presence", v), cassandra.VersionedName(timelineMap, v)} {
			if err := st.s.Query(ctx, "DROP TABLE IF EXISTS "+o.keyspace+"."+table); err != nil {
				return fmt.Errorf("rebuild: dropping %s: %w", table, err)
			}
			fmt.Fprintf(w, "rebuild: dropped %s.%s\n", o.keyspace, table)
		}
	}
	return nil
}
