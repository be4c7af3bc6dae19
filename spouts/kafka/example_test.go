package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/ops"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/spouts/kafka/kafkatest"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/trident"
)

// Counting the records per key of a topic exactly once, here against the
// in-process broker of kafkatest.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	broker, err := kafkatest.Start(kafkatest.Config{Topics: []string{"room-events"}, Partitions: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer broker.Close()
	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()
	w := &kafkago.Writer{Addr: kafkago.TCP(broker.Addrs()...), Topic: "room-events",
		Balancer: &kafkago.Hash{}, RequiredAcks: kafkago.RequireAll, Transport: transport}
	err = w.WriteMessages(ctx,
		kafkago.Message{Key: []byte("room-1"), Value: []byte("alice in")},
		kafkago.Message{Key: []byte("room-2"), Value: []byte("bob in")},
		kafkago.Message{Key: []byte("room-1"), Value: []byte("carol in")},
	)
	if err = errors.Join(err, w.Close()); err != nil {
		fmt.Println(err)
		return
	}

	sp, err := kafka.New(ctx, kafka.Config{
		Brokers:  broker.Addrs(),
		Topics:   []string{"room-events"},
		Topology: "rooms", // raw fields: topic, partition, offset, key, value, …
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sp.Close() // after the topology stopped

	tt := trident.NewTopology("rooms")
	events := tt.NewStream("events", sp.Opaque()).
		Each(trident.Fields{kafka.FieldKey}, trident.FunctionFunc(func(_ context.Context, t trident.Tuple, out trident.Collector) error {
			out.Emit(string(t.Value(0).([]byte)))
			return nil
		}), "room")
	counts := trident.PersistentAggregate(events.GroupBy("room"),
		trident.OpaqueMemory[int64]("events-per-room"), trident.Fields{"room"}, ops.Count{}, "count")
	running, err := tt.Submit(ctx, trident.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer running.Stop(ctx)

	rooms := []state.Key{state.MustKey("room-1"), state.MustKey("room-2")}
	for ctx.Err() == nil {
		values, err := trident.ReadCommitted(ctx, running, counts, rooms...)
		if err != nil {
			fmt.Println(err)
			return
		}
		if values[0].Val+values[1].Val == 3 { // every record is in committed state
			fmt.Println("room-1:", values[0].Val, "room-2:", values[1].Val)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println(ctx.Err())
	// Output: room-1: 2 room-2: 1
}
