package kafka_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/opaque"
	"github.com/squallstream/squall/topology"
	"github.com/squallstream/squall/trident"
)

const (
	benchPartitions = 8
	benchTasks      = 2
	benchValueSize  = 100
	benchInFlight   = 2
)

// BenchmarkKafkaSpout reads b.N 100-byte records from the real Kafka
// through the opaque spout (raw fields, 2 tasks, default caps, 2 batches in
// flight) into a count per partition on opaque memory state, and, in the
// same run, reads them with
// a bare kafka-go fetch loop (Client.Fetch from explicit offsets, 2
// goroutines, no decoding beyond key and value). It reports msgs/s of the
// spout, raw-msgs/s of the loop and spout/raw, the ratio of the two.
// Producing the records is not timed.
//
//	go test -run '^$' -bench KafkaSpout -benchtime 1000000x ./spouts/kafka/
func BenchmarkKafkaSpout(b *testing.B) {
	br := realBroker(b)
	topic := br.topic(b, benchPartitions)
	produceBench(b, br, topic, b.N)
	b.ResetTimer()

	start := time.Now()
	rawN := rawFetchLoop(b, br, topic)
	raw := time.Since(start)
	if rawN != int64(b.N) {
		b.Fatalf("raw loop read %d records, want %d", rawN, b.N)
	}

	start = time.Now()
	spoutN := spoutCount(b, br, topic, int64(b.N))
	sp := time.Since(start)
	if spoutN != int64(b.N) {
		b.Fatalf("spout counted %d records, want %d", spoutN, b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/sp.Seconds(), "msgs/s")
	b.ReportMetric(float64(b.N)/raw.Seconds(), "raw-msgs/s")
	b.ReportMetric(raw.Seconds()/sp.Seconds(), "spout/raw")
	b.ReportMetric(0, "ns/op")
}

// produceBench writes n records of benchValueSize bytes with 8-byte keys,
// spread evenly over the partitions.
func produceBench(b *testing.B, br *broker, topic string, n int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w := &kafkago.Writer{
		Addr: kafkago.TCP(br.addrs...), Topic: topic, Transport: br.client.Transport,
		Balancer:     &kafkago.RoundRobin{},
		RequiredAcks: kafkago.RequireAll, BatchTimeout: 2 * time.Millisecond,
		BatchSize: 5000, BatchBytes: 900_000,
	}
	defer w.Close()
	value := make([]byte, benchValueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	const chunk = 80_000
	msgs := make([]kafkago.Message, 0, chunk)
	for i := range n {
		msgs = append(msgs, kafkago.Message{Key: []byte{'k', byte(i), byte(i >> 8), byte(i >> 16), 0, 0, 0, 0}, Value: value})
		if len(msgs) == chunk || i == n-1 {
			if err := w.WriteMessages(ctx, msgs...); err != nil {
				b.Fatalf("produce: %.300v", err)
			}
			msgs = msgs[:0]
		}
	}
}

// rawFetchLoop reads every partition of topic from offset 0 to its end
// with Client.Fetch, benchTasks goroutines splitting the partitions, and
// returns the number of records.
func rawFetchLoop(b *testing.B, br *broker, topic string) int64 {
	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()
	client := &kafkago.Client{Addr: kafkago.TCP(br.addrs...), Transport: transport, Timeout: 10 * time.Second}
	ctx := context.Background()
	var mu sync.Mutex
	var total int64
	var wg sync.WaitGroup
	for task := range benchTasks {
		wg.Go(func() {
			var n int64
			retries := 0
			for p := task; p < benchPartitions; p += benchTasks {
				for off := int64(0); ; {
					resp, err := client.Fetch(ctx, &kafkago.FetchRequest{Topic: topic, Partition: p, Offset: off, MaxBytes: 1 << 20})
					if err == nil {
						err = resp.Error
					}
					if err != nil && retries < 100 {
						// A new topic's leaders can take a moment to settle.
						retries++
						time.Sleep(50 * time.Millisecond)
						continue
					}
					if err != nil {
						b.Error(err)
						return
					}
					got := 0
					for {
						r, err := resp.Records.ReadRecord()
						if errors.Is(err, io.EOF) {
							break
						}
						if err != nil {
							b.Error(err)
							return
						}
						if r.Offset < off {
							continue
						}
						k, _ := kafkago.ReadAll(r.Key)
						v, _ := kafkago.ReadAll(r.Value)
						if len(k) == 0 || len(v) != benchValueSize {
							b.Errorf("record %d of partition %d: key %q, %d bytes of value", r.Offset, p, k, len(v))
							return
						}
						off = r.Offset + 1
						got++
						n++
					}
					if got == 0 || off >= resp.HighWatermark {
						break
					}
				}
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	return total
}

// spoutCount counts the records of topic per partition through the opaque
// spout and returns the total once it reaches want.
func spoutCount(b *testing.B, br *broker, topic string, want int64) int64 {
	ctx := context.Background()
	sp, err := kafka.New(ctx, kafka.Config{Brokers: br.addrs, Topics: []string{topic}, Topology: "bench-" + topic,
		Logger: testLogger(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	maps := make([]*state.Memory, 2)
	for i := range maps {
		maps[i] = state.NewMemory("bench")
	}
	factory := trident.Opaque[int64]("count", func(_ context.Context, p, _ int) (state.BackingMap[[]byte], error) { return maps[p], nil })
	tt := trident.NewTopology("bench")
	s := tt.NewStream("records", sp.Opaque().Parallelism(benchTasks))
	trident.PersistentAggregate(s.GroupBy(kafka.FieldPartition).Parallelism(len(maps)), factory, trident.Fields{kafka.FieldPartition}, countAgg{}, "count")
	cfg := trident.Config{}
	cfg.BatchEmitInterval = time.Millisecond
	cfg.MaxBatchesInFlight = benchInFlight
	cluster := topology.NewLocalCluster()
	defer cluster.Shutdown(ctx)
	cfg.Cluster = cluster
	if _, err := tt.Submit(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	keys := make([]state.Key, benchPartitions)
	for p := range keys {
		keys[p] = state.MustKey(p)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var n int64
		for _, m := range maps {
			entries, err := opaque.New[int64](m, state.MapOptions[int64]{}).MultiGet(ctx, keys)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range entries {
				n += e.Val
			}
		}
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}
