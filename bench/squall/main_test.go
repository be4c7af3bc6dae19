package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The keys each workload's RESULT line must carry, with the Storm side's
// names (bench/compare.sh reads them).
var wantKeys = map[string][]string{
	"core-noack":               {"tuples_per_s", "window_s"},
	"core-acked":               {"tuples_per_s", "p50_us", "p99_us", "failed", "window_s"},
	"trident-wordcount":        {"words_per_s", "batches", "words_per_batch", "window_s"},
	"trident-wordcount-preagg": {"words_per_s", "batches", "words_per_batch", "window_s"},
	"acker-memory":             {"pending", "bytes_per_tree", "heap_before", "heap_after"},
	"cluster-acked":            {"tuples_per_s", "p50_us", "p99_us", "failed", "workers", "window_s"},
	"floor-wordcount":          {"words_per_s", "batches", "words_per_batch", "window_s"},
}

// TestMain lets the test binary serve as cluster-acked's second worker,
// which runClusterAcked starts from the running executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == clusterWorkerArg {
		if err := clusterWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "cluster worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var resultLine = regexp.MustCompile(`^RESULT( [a-z0-9_]+=[^ =]+)+$`)

// TestWorkloadsPrintResult runs every workload with a tiny window and checks
// its RESULT line.
func TestWorkloadsPrintResult(t *testing.T) {
	for name, keys := range wantKeys {
		t.Run(name, func(t *testing.T) {
			kv := runWorkload(t, name, "1")
			if (name == "trident-wordcount" || name == "floor-wordcount") && kv["words_per_batch"] != "840" {
				t.Fatalf("words_per_batch = %s, want 840 (100 sentences)", kv["words_per_batch"])
			}
			for _, k := range keys {
				if _, ok := kv[k]; !ok {
					t.Fatalf("key %s missing in %v", k, kv)
				}
			}
		})
	}
}

// TestParallelism2 runs the workloads compare.sh runs with parallelism 2
// (its -p2 rows).
func TestParallelism2(t *testing.T) {
	for _, name := range []string{"core-noack", "core-acked", "trident-wordcount", "floor-wordcount"} {
		t.Run(name, func(t *testing.T) {
			kv := runWorkload(t, name, "2")
			// Each of the two source tasks emits 100 sentences (840 words)
			// per txid.
			if name == "trident-wordcount" && kv["words_per_batch"] != "1680" {
				t.Fatalf("words_per_batch = %s, want 1680 (2 tasks of 100 sentences)", kv["words_per_batch"])
			}
			// Each of the floor's two goroutines counts batches of 100
			// sentences.
			if name == "floor-wordcount" && kv["words_per_batch"] != "840" {
				t.Fatalf("words_per_batch = %s, want 840 (100 sentences a goroutine)", kv["words_per_batch"])
			}
			if rate := kv["tuples_per_s"] + kv["words_per_s"]; rate == "0" {
				t.Fatalf("nothing counted: %v", kv)
			}
		})
	}
}

// runWorkload runs workload name with the given parallelism and a tiny
// window, checks its RESULT line and returns its keys and values.
func runWorkload(t *testing.T, name, parallelism string) map[string]string {
	t.Helper()
	o, err := parse([]string{name, "--window", "200ms", "--warmup", "50ms", "--trees", "2000", "--sentences", "100",
		"--parallelism", parallelism}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	line, err := run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !resultLine.MatchString(line) {
		t.Fatalf("malformed RESULT line %q", line)
	}
	kv := map[string]string{}
	for _, f := range strings.Fields(line)[1:] {
		k, v, _ := strings.Cut(f, "=")
		kv[k] = v
	}
	if kv["impl"] != "squall" || kv["workload"] != name || kv["parallelism"] != parallelism {
		t.Fatalf("impl/workload/parallelism wrong in %q", line)
	}
	for k, v := range kv {
		if k == "impl" || k == "workload" {
			continue
		}
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("key %s=%q is not a number in %q", k, v, line)
		}
	}
	for _, k := range []string{"batch", "parallelism"} {
		if _, ok := kv[k]; !ok {
			t.Fatalf("key %s missing in %q", k, line)
		}
	}
	if (name == "core-acked" || name == "cluster-acked") && kv["failed"] != "0" {
		t.Fatalf("trees failed: %q", line)
	}
	return kv
}

func TestParse(t *testing.T) {
	o, err := parse([]string{"--window", "2s", "core-acked", "--pending", "8"}, io.Discard)
	if err != nil || o.workload != "core-acked" || o.window != 2*time.Second || o.pending != 8 || o.batch != 256 || o.parallelism != 1 {
		t.Fatalf("parse = %+v, %v", o, err)
	}
	o, err = parse([]string{"--parallelism", "2", "trident-wordcount", "--sentences", "50"}, io.Discard)
	if err != nil || o.workload != "trident-wordcount" || o.parallelism != 2 || o.sentences != 50 {
		t.Fatalf("parse with --parallelism 2 = %+v, %v", o, err)
	}
	o, err = parse([]string{"core-noack", "--parallelism=2"}, io.Discard)
	if err != nil || o.workload != "core-noack" || o.parallelism != 2 {
		t.Fatalf("parse with --parallelism=2 = %+v, %v", o, err)
	}
	for _, bad := range [][]string{nil, {"nope"}, {"core-acked", "core-noack"}, {"core-acked", "--window", "0s"},
		{"core-noack", "--parallelism", "0"}, {"core-noack", "--parallelism", "two"},
		{"acker-memory", "--parallelism", "2"}, {"cluster-acked", "--parallelism", "2"}} {
		if _, err := parse(bad, io.Discard); err == nil {
			t.Errorf("parse(%q) succeeded", bad)
		}
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	for us := int64(1); us <= 100_000; us++ {
		h.record(us)
	}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 50_000}, {0.99, 99_000}} {
		got := h.quantile(c.q)
		if d := float64(got-c.want) / float64(c.want); d > 0.001 || d < -0.02 {
			t.Errorf("quantile(%v) = %d, want about %d", c.q, got, c.want)
		}
	}
	for i := range histSub + 57*histSub {
		if histIndex(histLowerBound(i)) != i {
			t.Fatalf("bucket %d: lower bound %d maps to %d", i, histLowerBound(i), histIndex(histLowerBound(i)))
		}
	}
}
