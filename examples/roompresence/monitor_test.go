package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/spouts/kafka/kafkatest"
)

// TestRunServesMonitor runs the run command against the in-process
// broker and checks that it prints the monitor's address and serves the
// topology's page, REST API and metrics there.
func TestRunServesMonitor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	broker, err := kafkatest.Start(kafkatest.Config{Topics: []string{"room-events", "room-events-dlq"}, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, self, "run", "--kafka", broker.Addrs()[0], "--data", t.TempDir(),
		"--partitions", "2", "--tasks", "1", "--http", "127.0.0.1:0", "--log-file", filepath.Join(t.TempDir(), "run.json"))
	cmd.Env = append(os.Environ(), mainVar+"=1", cassandraVar+"=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	// The address comes first; the first commit shows the topology is
	// registered.
	lines := bufio.NewScanner(stderr)
	var url string
	addr := regexp.MustCompile(`^run: monitor .* on (http://127\.0\.0\.1:\d+)$`)
	var out strings.Builder
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if m := addr.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
		if strings.HasPrefix(lines.Text(), "run: first commit") {
			break
		}
	}
	if url == "" {
		t.Fatalf("no monitor address, or no commit, in:\n%s", out.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(path string) []byte {
		t.Helper()
		resp, err := client.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v: %s", path, resp.StatusCode, err, body)
		}
		return body
	}
	var d monitor.TopologyDetail
	if err := json.Unmarshal(get("/api/v1/topologies/roompresence"), &d); err != nil {
		t.Fatal(err)
	}
	if d.Kind != "trident" || d.Batches == nil || d.Batches.CommittedTxID == 0 || d.Lag == nil {
		t.Fatalf("topology: %+v", d)
	}
	if m := get("/metrics"); !strings.Contains(string(m), `squall_committed_txid{topology="roompresence"}`) {
		t.Fatalf("metrics lack the committed txid:\n%s", m)
	}
	if page := get("/"); !strings.Contains(string(page), "roompresence") {
		t.Fatalf("index page:\n%s", page)
	}
	// The JSON log file, through the log viewer's API.
	var logs monitor.LogsView
	if err := json.Unmarshal(get("/api/v1/logs?q=first+commit&tail=5"), &logs); err != nil {
		t.Fatal(err)
	}
	if len(logs.Lines) != 1 || logs.Lines[0].Msg != "first commit" || logs.Lines[0].Level != "INFO" || logs.Lines[0].Attrs["committed_txid"] == nil {
		t.Fatalf("logs: %+v", logs)
	}
	if page := get("/ui/logs?q=commit"); !strings.Contains(string(page), "first commit") {
		t.Fatalf("logs page:\n%s", page)
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run did not stop cleanly on interrupt: %v", err)
	}
}
