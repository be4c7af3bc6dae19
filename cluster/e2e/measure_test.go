package e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestSubmitToFirstCommit measures, for docs/PERFORMANCE.md, the time
// from `submit --workers 2` to the first commit with certificates (HTTPS,
// signed assignments, mutual TLS between the workers) and without, in
// alternating rounds: SQUALL_E2E_MEASURE_SUBMIT=N rounds of each.
func TestSubmitToFirstCommit(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SQUALL_E2E_MEASURE_SUBMIT"))
	if n <= 0 {
		t.Skip("set SQUALL_E2E_MEASURE_SUBMIT=N to measure submit to first commit over N rounds")
	}
	times := map[bool][]time.Duration{}
	for i := range n {
		for _, certs := range []bool{true, false} {
			t.Run(fmt.Sprintf("round%d-certs=%v", i, certs), func(t *testing.T) {
				c := newCluster(t, 2*time.Second)
				if !certs {
					c.WithoutCerts()
				}
				c.nimbus("n1")
				c.supervisor("s1", t.TempDir(), 7900)
				c.supervisor("s2", t.TempDir(), 8000)
				c.leader(60*time.Second, "")
				start := time.Now()
				if out, err := c.Run("submit", "wordcount", "--workers", "2", "--timeout", "60s"); err != nil {
					t.Fatalf("submit: %v\n%s", err, out)
				}
				c.committing("wordcount", 90*time.Second, 0, "the first commit", anyStatus)
				d := time.Since(start)
				times[certs] = append(times[certs], d)
				t.Logf("certs=%v: submit to first commit %v", certs, d)
			})
		}
	}
	for _, certs := range []bool{true, false} {
		ds := times[certs]
		slices.Sort(ds)
		if len(ds) > 0 {
			t.Logf("certs=%v over %d rounds: median %v, min %v, max %v", certs, len(ds), ds[len(ds)/2], ds[0], ds[len(ds)-1])
		}
	}
}
