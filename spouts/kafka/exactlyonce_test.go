package kafka_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExactlyOnce is the end-to-end proof on the real Kafka: 1,000,000
// records over 8 partitions are counted per key on durable opaque state
// (bbolt) with a durable coordination store, while batches fail at random
// (retryable), workers crash (panics), and the whole process is killed
// with SIGKILL and started again. The final counts equal the input
// exactly.
//
// The pipeline runs in child processes (this package's test binary run
// with childVar set), so that the kill is a real process death. The child
// binary is built without the race detector, which slows this pipeline
// down about eight times (16k against 130k records/s on a 2-core machine):
// a million records under -race would take minutes. The in-process
// end-to-end tests (broker restart, leader move, dead letters) run the
// same pipeline under -race.
func TestExactlyOnce(t *testing.T) {
	b := realBroker(t)
	child := buildChild(t)
	const (
		records    = 1_000_000
		partitions = 8
		keys       = 1000
	)
	topic := b.topic(t, partitions)
	start := time.Now()
	want := produceKeyed(t, b.addrs, topic, partitions, records, keys, nil)
	t.Logf("produced %d records in %v", records, time.Since(start).Round(time.Millisecond))
	p := pipelineParams{
		Brokers: b.addrs, Topic: topic, DeadLetters: b.topic(t, 1), Dir: t.TempDir(), Keys: keys, SpoutTasks: 2, MaxRecords: 2000,
		FailEvery: 150_001, PanicEvery: 200_003, MaxPanics: 2,
	}
	// The first process is killed a third of the way through.
	first := runChild(t, child, p, records, records/3)
	t.Logf("first process killed after counting %d records (%v)", first, time.Since(start).Round(time.Millisecond))
	if first >= records {
		t.Fatalf("the first process finished (%d records) before it could be killed", first)
	}
	runChild(t, child, p, records, 0)
	t.Logf("second process finished (%v)", time.Since(start).Round(time.Millisecond))

	// Read the state files the children left.
	checkCounts(t, durableCounts(t, p), want)
}

// checkCounts compares counts per key and names the first differences.
func checkCounts(t testing.TB, got, want map[string]int64) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	var diffs []string
	var gotN, wantN int64
	for k, w := range want {
		wantN += w
		if got[k] != w && len(diffs) < 10 {
			diffs = append(diffs, fmt.Sprintf("%s: %d, want %d", k, got[k], w))
		}
	}
	for k, g := range got {
		gotN += g
		if _, ok := want[k]; !ok && len(diffs) < 10 {
			diffs = append(diffs, fmt.Sprintf("%s: %d, want none", k, g))
		}
	}
	t.Fatalf("counts differ: total %d, want %d; %s", gotN, wantN, strings.Join(diffs, "; "))
}

// runChild runs the pipeline in a child process until it has counted
// total records and exits, or, with killAt > 0, until it has counted
// killAt and is killed with SIGKILL. It returns the last count the child
// printed.
func runChild(t *testing.T, bin string, p pipelineParams, total, killAt int64) int64 {
	t.Helper()
	params, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestExactlyOnceChild$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), childVar+"="+string(params), "SQUALL_KAFKA_CHILD_TOTAL="+strconv.FormatInt(total, 10))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last int64
	var tail []string
	var chaos string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if tail = append(tail, line); len(tail) > 20 {
			tail = tail[1:]
		}
		if strings.HasPrefix(line, "chaos ") {
			t.Logf("child: %s", line)
			chaos = line
		}
		if n, ok := strings.CutPrefix(line, "progress "); ok {
			last, _ = strconv.ParseInt(n, 10, 64)
			if killAt > 0 && last >= killAt {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
	}
	_, _ = io.Copy(io.Discard, out)
	err = cmd.Wait()
	switch {
	case killAt > 0 && last < killAt:
		t.Fatalf("child exited (%v) before it was killed, at %d records:\n%s\n%s", err, last, strings.Join(tail, "\n"), stderr.String())
	case killAt == 0 && err != nil:
		t.Fatalf("child failed: %v at %d records:\n%s\n%s", err, last, strings.Join(tail, "\n"), stderr.String())
	case killAt == 0 && (chaos == "" || strings.Contains(chaos, "panics=0") || strings.Contains(chaos, "failures=0")):
		t.Fatalf("the child's run had no worker crash or no batch failure (%q): the test proves less than it claims", chaos)
	}
	return last
}

// buildChild builds this package's tests without the race detector and
// returns the binary.
func buildChild(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build a helper program: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "kafka-child.test")
	start := time.Now()
	cmd := exec.Command(goCmd, "test", "-c", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the child binary: %v\n%s", err, out)
	}
	t.Logf("built the child binary in %v", time.Since(start).Round(time.Millisecond))
	return bin
}

// TestExactlyOnceChild is the child process of TestExactlyOnce: it runs
// the pipeline, prints "progress N" as the counts grow, and returns once
// they reach the total.
func TestExactlyOnceChild(t *testing.T) {
	raw := os.Getenv(childVar)
	if raw == "" {
		t.Skip("run by TestExactlyOnce")
	}
	var p pipelineParams
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		t.Fatal(err)
	}
	total, err := strconv.ParseInt(os.Getenv("SQUALL_KAFKA_CHILD_TOTAL"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	pl := startPipeline(t, p)
	defer pl.stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	progressCtx, stopProgress := context.WithCancel(ctx)
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		for progressCtx.Err() == nil {
			if n, err := pl.total(progressCtx); err == nil {
				fmt.Printf("progress %d\n", n)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	got := pl.waitTotal(t, ctx, total)
	stopProgress()
	<-progressDone
	var n int64
	for _, v := range got {
		n += v
	}
	fmt.Printf("progress %d\n", n)
	fmt.Printf("chaos panics=%d failures=%d\n", pl.panics.Load(), pl.failed.Load())
}
