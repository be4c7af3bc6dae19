package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/squallstream/squall/examples/roompresence/room"
	"github.com/squallstream/squall/spouts/kafka"
)

func cmdVerify(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	o.register(fs)
	if err := o.parse(fs, args, true); err != nil {
		return err
	}
	return verifyStore(ctx, &o)
}

// verifyStore opens the store o names and verifies it.
func verifyStore(ctx context.Context, o *options) error {
	st, err := o.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	return verify(ctx, o, st, os.Stdout)
}

// verify recomputes the expected presence rows and timelines from the
// whole events topic, compares them with the store, checks that every
// malformed record reached the dead-letter topic, and prints the outcome.
// It returns errMismatch on any difference.
func verify(ctx context.Context, o *options, st Store, w io.Writer) error {
	start := time.Now()
	kio, err := newKafkaIO(o.brokers(), o.sec.kafka())
	if err != nil {
		return err
	}
	defer kio.Close()
	want := room.NewExpected()
	type coord struct {
		partition int
		offset    int64
	}
	var events int
	malformed := map[coord]bool{}
	err = kio.readAll(ctx, o.topic, func(r record) {
		e, err := room.Decode(r.value)
		if err != nil {
			malformed[coord{r.partition, r.offset}] = true
			return
		}
		events++
		want.Add(e)
	})
	if err != nil {
		return err
	}
	want.Finish()
	d, err := compareStore(ctx, st, want)
	if err != nil {
		return err
	}
	lettered := 0
	err = kio.readAll(ctx, o.dlq, func(r record) {
		var c coord
		if r.headers[kafka.HeaderTopic] != o.topic {
			return
		}
		if _, err := fmt.Sscan(r.headers[kafka.HeaderPartition], &c.partition); err != nil {
			return
		}
		if _, err := fmt.Sscan(r.headers[kafka.HeaderOffset], &c.offset); err != nil {
			return
		}
		if malformed[c] {
			delete(malformed, c)
			lettered++
		}
	})
	if err != nil {
		return err
	}
	for c := range malformed {
		d.extra++
		d.add("malformed record %s@%d/%d is not in the dead-letter topic %s", o.topic, c.partition, c.offset, o.dlq)
	}
	fmt.Fprintf(w, "verify: %d events and %d malformed records (%d in %s) in %s; %d visits, %d room hours (%v)\n",
		events, lettered+len(malformed), lettered, o.dlq, o.topic, len(want.Periods), len(want.Timelines), time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(w, "verify: %s\n", d)
	if d.total() > 0 {
		return errMismatch
	}
	return nil
}
