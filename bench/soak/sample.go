package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// procStatus is what the soak reads from /proc/<pid>/status, in bytes.
type procStatus struct {
	vmRSS   int64 // the resident set
	rssAnon int64 // its anonymous part: the Go heap, stacks, the runtime
	rssFile int64 // its file-backed part: the binary, the embedded store's mmap
	threads int
}

// parseStatus reads the fields of procStatus from the text of a
// /proc/<pid>/status file.
func parseStatus(text string) (procStatus, error) {
	var s procStatus
	found := 0
	for line := range strings.Lines(text) {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		var threads bool
		switch name {
		case "VmRSS":
			dst = &s.vmRSS
		case "RssAnon":
			dst = &s.rssAnon
		case "RssFile":
			dst = &s.rssFile
		case "Threads":
			threads = true
		default:
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			return s, fmt.Errorf("soak: status line %q: no value", strings.TrimSpace(line))
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return s, fmt.Errorf("soak: status line %q: %w", strings.TrimSpace(line), err)
		}
		found++
		if threads {
			s.threads = int(n)
			continue
		}
		if len(fields) < 2 || fields[1] != "kB" {
			return s, fmt.Errorf("soak: status line %q: want a size in kB", strings.TrimSpace(line))
		}
		*dst = n << 10
	}
	if found < 4 {
		return s, fmt.Errorf("soak: status: found %d of VmRSS, RssAnon, RssFile and Threads", found)
	}
	return s, nil
}

// readStatus reads /proc/<pid>/status.
func readStatus(pid int) (procStatus, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procStatus{}, err
	}
	return parseStatus(string(b))
}

// parseMetric returns the value of the unlabelled sample name in a
// Prometheus text exposition.
func parseMetric(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			return 0, fmt.Errorf("soak: metric line %q: %w", line, err)
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("soak: no metric %s", name)
}

// runtimeSample is what the run's /metrics says about its Go runtime.
type runtimeSample struct {
	goroutines  int
	heapInuse   int64
	heapObjects int64
}

// scrape reads the goroutine count and the heap from the monitor's
// /metrics (plain HTTP on loopback).
func scrape(ctx context.Context, client *http.Client, base string) (runtimeSample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return runtimeSample{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return runtimeSample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return runtimeSample{}, fmt.Errorf("soak: GET %s/metrics: %s", base, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return runtimeSample{}, err
	}
	var s runtimeSample
	g, err := parseMetric(strings.NewReader(string(body)), "go_goroutines")
	if err != nil {
		return s, err
	}
	s.goroutines = int(g)
	if v, err := parseMetric(strings.NewReader(string(body)), "go_memstats_heap_inuse_bytes"); err == nil {
		s.heapInuse = int64(v)
	}
	if v, err := parseMetric(strings.NewReader(string(body)), "go_memstats_heap_objects"); err == nil {
		s.heapObjects = int64(v)
	}
	return s, nil
}

// sample is one line of the soak's report.
type sample struct {
	at       time.Duration // since the run started
	fed      int64         // events fed so far
	status   procStatus
	runtime  runtimeSample
	progress progress // the run's last progress line
	faults   int      // injected so far
}

func (s sample) String() string {
	return fmt.Sprintf("soak: %8s fed %9d  rss %7.1f MiB (anon %6.1f, file %6.1f)  heap %6.1f MiB  goroutines %4d  threads %3d  committed txid %-6d lag %-7d crashes %-4d faults %d",
		s.at.Round(time.Second), s.fed, mib(s.status.vmRSS), mib(s.status.rssAnon), mib(s.status.rssFile), mib(s.runtime.heapInuse),
		s.runtime.goroutines, s.status.threads, s.progress.committed, s.progress.lag, s.progress.crashes, s.faults)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
