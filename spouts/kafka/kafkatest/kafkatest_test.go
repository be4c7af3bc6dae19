package kafkatest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.uber.org/goleak"

	"github.com/squallstream/squall/spouts/kafka/kafkatest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestProduceFetch writes through kafka-go to one partition and reads back by
// explicit offset, with Client.Fetch and with a partition Reader; then it
// closes the cluster and checks that no goroutine outlives it.
func TestProduceFetch(t *testing.T) {
	defer goleak.VerifyNone(t)
	var logs bytes.Buffer
	c, err := kafkatest.Start(kafkatest.Config{
		Topics:     []string{"events"},
		Partitions: 3,
		Logger:     slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.Addrs()
	if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "127.0.0.1:") {
		t.Fatalf("Addrs() = %q, want one 127.0.0.1 address", addrs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	transport := &kafkago.Transport{}
	defer transport.CloseIdleConnections()

	w := &kafkago.Writer{
		Addr:         kafkago.TCP(addrs...),
		Topic:        "events",
		Balancer:     kafkago.BalancerFunc(func(kafkago.Message, ...int) int { return 2 }),
		RequiredAcks: kafkago.RequireAll,
		BatchTimeout: time.Millisecond,
		Transport:    transport,
	}
	for i := range 5 {
		if err := w.WriteMessages(ctx, kafkago.Message{Key: []byte("room-7"), Value: fmt.Appendf(nil, "event-%d", i)}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	client := &kafkago.Client{Addr: kafkago.TCP(addrs...), Transport: transport}
	resp, err := client.Fetch(ctx, &kafkago.FetchRequest{
		Topic: "events", Partition: 2, Offset: 2, MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond,
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("fetch: %v %v", err, resp.Error)
	}
	if resp.HighWatermark != 5 {
		t.Errorf("high watermark = %d, want 5", resp.HighWatermark)
	}
	var got []string
	for {
		rec, err := resp.Records.ReadRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Offset < 2 {
			continue
		}
		v, err := kafkago.ReadAll(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d=%s", rec.Offset, v))
	}
	if want := "2=event-2 3=event-3 4=event-4"; strings.Join(got, " ") != want {
		t.Errorf("fetched %q, want %q", strings.Join(got, " "), want)
	}

	r := kafkago.NewReader(kafkago.ReaderConfig{
		Brokers: addrs, Topic: "events", Partition: 2, MaxWait: 100 * time.Millisecond,
	})
	if err := r.SetOffset(4); err != nil {
		t.Fatal(err)
	}
	m, err := r.ReadMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Offset != 4 || string(m.Value) != "event-4" {
		t.Errorf("reader: offset %d value %q, want 4 event-4", m.Offset, m.Value)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	transport.CloseIdleConnections()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", addrs[0], time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Close", addrs[0])
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("the broker logged errors:\n%s", logs.String())
	}
}

// TestCloseWithOpenConnections closes the cluster under a client that still
// holds connections; Close must not wait for the client, and nothing leaks.
func TestCloseWithOpenConnections(t *testing.T) {
	defer goleak.VerifyNone(t)
	c, err := kafkatest.Start(kafkatest.Config{Brokers: 3, AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Addrs()); n != 3 {
		t.Fatalf("%d addresses, want 3", n)
	}
	conn, err := kafkago.Dial("tcp", c.Addrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Brokers(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		c.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked with a client connection open")
	}
	// The broker side of the connection is gone.
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Brokers(); err == nil {
		t.Error("a request on a connection to a closed cluster succeeded")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []kafkatest.Config{
		{Brokers: -1},
		{Partitions: -2},
		{Ports: []int{0}},
		{Ports: []int{70000}},
		{Topics: []string{""}},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: Validate() = nil, want an error", cfg)
		}
		if _, err := kafkatest.Start(cfg); err == nil {
			t.Errorf("%+v: Start succeeded", cfg)
		}
	}
	if err := (kafkatest.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}
