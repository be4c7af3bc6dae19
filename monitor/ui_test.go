package monitor_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/squallstream/squall/monitor"
)

// htmxSHA256 is the checksum recorded in ui/static/README.md.
const htmxSHA256 = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"

func TestUI(t *testing.T) {
	ctx := testCtx(t)
	r := wordCount(t, ctx, "words <&>", nil, 0)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})
	if err := r.WaitCommitted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	page := func(path string, want ...string) {
		t.Helper()
		code, h, body := call(t, ts, "GET", path, nil)
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s: %s", path, code, h.Get("Content-Type"), body)
		}
		for _, w := range want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s lacks %q:\n%s", path, w, body)
			}
		}
		if strings.Contains(string(body), "words <&>") {
			t.Errorf("%s: the name is not escaped", path)
		}
	}
	page("/", `<script src="/static/htmx.min.js">`, `hx-get="/ui/partials/topologies"`, `hx-trigger="every 2s"`,
		`href="/ui/topologies/words%20%3C&amp;%3E"`, "words &lt;&amp;&gt;", "running")
	page("/ui/partials/topologies", "words &lt;&amp;&gt;", "committed txid")
	page("/ui/topologies/words%20%3C&%3E", `hx-trigger="every 2s"`, "Components", "$master", "Recent errors", "committed txid",
		"<h2>Graph</h2>", `class="topology-graph"`, `<text class="name" `)
	page("/ui/partials/topologies/words%20%3C&%3E", "Components")
	if code, _, _ := call(t, ts, "GET", "/ui/topologies/nope", nil); code != http.StatusNotFound {
		t.Fatalf("unknown topology page: %d", code)
	}

	code, h, body := call(t, ts, "GET", "/static/htmx.min.js", nil)
	if code != http.StatusOK || !strings.Contains(h.Get("Content-Type"), "javascript") {
		t.Fatalf("htmx: %d %s", code, h.Get("Content-Type"))
	}
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != htmxSHA256 {
		t.Fatalf("htmx.min.js checksum %x, want %s", sum, htmxSHA256)
	}
}

func TestPprof(t *testing.T) {
	ts := serve(t, monitor.NewRegistry(), monitor.Config{})
	code, _, body := call(t, ts, "GET", "/debug/pprof/", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Fatalf("index: %d: %s", code, body)
	}
	code, _, body = call(t, ts, "GET", "/debug/pprof/goroutine?debug=1", nil)
	if code != http.StatusOK || !strings.Contains(string(body), "goroutine profile") {
		t.Fatalf("goroutine: %d: %.200s", code, body)
	}
	code, h, _ := call(t, ts, "GET", "/debug/pprof/heap", nil)
	if code != http.StatusOK || h.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("heap: %d %s", code, h.Get("Content-Type"))
	}
	code, _, body = call(t, ts, "GET", "/debug/pprof/profile?seconds=0.05", nil)
	if code != http.StatusOK || len(body) == 0 {
		t.Fatalf("CPU profile: %d, %d bytes", code, len(body))
	}
	wantError(t, ts, "GET", "/debug/pprof/nope", nil, http.StatusNotFound, `no profile named "nope"`)
	wantError(t, ts, "GET", "/debug/pprof/profile?seconds=forever", nil, http.StatusBadRequest, "seconds")
}
