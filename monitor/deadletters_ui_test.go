package monitor_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/squallstream/squall/monitor"
)

// TestUIShowsSourceDeadLetters: the UI's dead letters count the sources'
// dead letters (a Kafka spout's dead-letter topic) with the operations'
// rejects, on the index page's column and the topology page, as REST and
// the metrics do.
func TestUIShowsSourceDeadLetters(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words", nil, 0)
	reg := monitor.NewRegistry()
	sources := monitor.SourceStatsFunc(func() monitor.SourceCounters { return monitor.SourceCounters{DeadLettered: 7} })
	if err := reg.Add(r, monitor.Options{Sources: sources}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})
	if err := r.WaitCommitted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/":                             `<td class="n">7 (7 from sources)</td>`,
		"/ui/partials/topologies":       `<td class="n">7 (7 from sources)</td>`,
		"/ui/topologies/words":          "<td>0 from operations, 7 from sources</td>",
		"/ui/partials/topologies/words": "<td>0 from operations, 7 from sources</td>",
	} {
		code, _, body := call(t, ts, "GET", path, nil)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", path, code)
		}
		if !strings.Contains(string(body), want) {
			t.Errorf("%s lacks %q:\n%s", path, want, body)
		}
	}

	// REST keeps the two apart.
	var d struct {
		Batches struct {
			DeadLetters uint64 `json:"dead_letters"`
		} `json:"batches"`
		Sources *monitor.SourceCounters `json:"sources"`
	}
	getJSON(t, ts, "GET", "/api/v1/topologies/words", nil, http.StatusOK, &d)
	if d.Batches.DeadLetters != 0 || d.Sources == nil || d.Sources.DeadLettered != 7 {
		t.Fatalf("REST: batches.dead_letters %d, sources %+v", d.Batches.DeadLetters, d.Sources)
	}
}
