package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/state/cassandra"
)

// runMain runs the example's main with args in a child process and
// returns its stdout and stderr.
func runMain(t *testing.T, ctx context.Context, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = append(append(os.Environ(), mainVar+"=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// TestEmbeddedDefault runs the example with no command and no services:
// it must generate, catch up, print a room's day and verify with zero
// mismatches.
func TestEmbeddedDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, errOut, err := runMain(t, ctx, []string{kafkaVar + "=", cassandraVar + "="}, "--events", "4000", "--malformed", "0.01")
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, want := range []string{"embedded Kafka-protocol broker", "verify: 0 mismatches", "hour  entries  visits  peak  person-minutes"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, out, errOut)
		}
	}
	if m := regexp.MustCompile(`(\d+) malformed records \((\d+) in`).FindStringSubmatch(out); m == nil || m[1] == "0" || m[1] != m[2] {
		t.Errorf("malformed records not all dead-lettered: %v\n%s", m, out)
	}
}

// TestChaosAgainstRealServices is the scaled-down chaos run of the real
// deployment: 50,000 events through real Kafka into real Cassandra while
// 20 faults are injected (worker panics, retryable failures, process
// kills, a Kafka broker restart and Cassandra stopped), then verify.
func TestChaosAgainstRealServices(t *testing.T) {
	brokers := testenv.KafkaBrokers(t)
	hosts := testenv.CassandraHosts(t)
	testenv.RequireExclusive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	name := strings.ReplaceAll(testenv.UniqueName(t, "rp"), "-", "_")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropChaosData(t, brokers, hosts, name) })
	start := time.Now()
	out, errOut, err := runMain(t, ctx, nil, "chaos", "--events", "50000", "--faults", "20", "--malformed", "0.002",
		"--kafka", strings.Join(brokers, ","), "--cassandra", strings.Join(hosts, ","), "--keyspace", name,
		"--topic", name+"_events", "--dlq", name+"_dlq", "--services", filepath.Join(root, "scripts", "services.sh"),
		"--gap", "2s", "--down", "4s")
	t.Logf("chaos took %v\nstdout:\n%s\nstderr (tail):\n%s", time.Since(start).Round(time.Second), out, tail(errOut, 40))
	if err != nil {
		t.Fatalf("chaos failed: %v", err)
	}
	if !strings.Contains(out, "verify: 0 mismatches") {
		t.Fatal("verify did not report 0 mismatches")
	}
	m := regexp.MustCompile(`chaos: injected map\[([^\]]*)\]`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatal("chaos printed no fault summary")
	}
	total := 0
	for _, kv := range strings.Fields(m[1]) {
		_, v, _ := strings.Cut(kv, ":")
		n, _ := strconv.Atoi(v)
		total += n
	}
	if total < 20 || !strings.Contains(m[1], "kill:") || !strings.Contains(m[1], "kafka:") || !strings.Contains(m[1], "cassandra:") {
		t.Fatalf("injected %s (%d faults); want 20 of every kind", m[1], total)
	}
}

// dropChaosData deletes the keyspace and topics a chaos run made.
func dropChaosData(t *testing.T, brokers, hosts []string, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s, err := cassandra.Connect(ctx, cassandra.Config{Hosts: hosts, Keyspace: name}); err != nil {
		t.Logf("dropping keyspace %s: %v", name, err)
	} else {
		if err := s.DropKeyspace(ctx); err != nil {
			t.Logf("dropping keyspace %s: %v", name, err)
		}
		s.Close()
	}
	kio, err := newKafkaIO(brokers, kafkaSec{})
	if err != nil {
		t.Fatal(err)
	}
	defer kio.Close()
	if _, err := kio.client.DeleteTopics(ctx, &kafkago.DeleteTopicsRequest{Topics: []string{name + "_events", name + "_dlq"}}); err != nil {
		t.Logf("deleting topics of %s: %v", name, err)
	}
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	return strings.Join(l[max(len(l)-lines, 0):], "\n")
}
