package monitor_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/logfile"
	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/txn"
)

// The browser test drives a real headless Chromium (Debian's chromium
// package; scripts/install-chromium.sh installs it) against the UI of a
// running word count. $SQUALL_CHROMIUM names the browser binary; without
// it the test looks for chromium, then chromium-browser, on PATH. Missing,
// the test fails when $CI holds a true value (true, 1, ...), as the
// integration tests do, and skips elsewhere.
//
// It saves screenshots in t.ArtifactDir(): run with
// `go test -run TestBrowser -artifacts -outputdir DIR ./monitor` to keep
// them (docs/operations.md shows one).

// chromium returns the browser binary, or fails or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser"}
	if c := os.Getenv("SQUALL_CHROMIUM"); c != "" {
		names = []string{c}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := "no headless browser: install Debian's chromium (scripts/install-chromium.sh) or set SQUALL_CHROMIUM"
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser runs one headless Chromium on a page.
type browser struct {
	t       *testing.T
	bin     string
	profile string // a fresh user-data directory
}

func newBrowser(t *testing.T) *browser {
	return &browser{t: t, bin: chromium(t), profile: t.TempDir()}
}

// run starts the browser with args and the page, and returns its output.
// Each run is a separate process that exits when the page is done.
func (b *browser) run(ctx context.Context, page string, args ...string) []byte {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	all := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--user-data-dir=" + b.profile, "--hide-scrollbars",
	}, args...)
	cmd := exec.CommandContext(ctx, b.bin, append(all, page)...)
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.t.Fatalf("%s %v: %v\n%s", b.bin, args, err, stderr.Bytes())
	}
	return out
}

// dom loads page and returns the DOM after its scripts ran.
func (b *browser) dom(ctx context.Context, page string) string {
	b.t.Helper()
	return string(b.run(ctx, page, "--dump-dom"))
}

// screenshot saves a PNG of page in file and returns it decoded.
func (b *browser) screenshot(ctx context.Context, page, file string, width, height int) image.Image {
	b.t.Helper()
	b.run(ctx, page, "--screenshot="+file, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height))
	f, err := os.Open(file)
	if err != nil {
		b.t.Fatalf("the screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		b.t.Fatalf("the screenshot %s: %v", file, err)
	}
	if s := img.Bounds().Size(); s.X != width || s.Y != height {
		b.t.Fatalf("the screenshot is %v, want %dx%d", s, width, height)
	}
	return img
}

// pixels counts the pixels of img in colour c.
func pixels(img image.Image, c color.RGBA) int {
	n := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)) == c {
				n++
			}
		}
	}
	return n
}

// counter finds the figure a page shows in the row headed th.
func counter(t *testing.T, dom, th string) uint64 {
	t.Helper()
	re := regexp.MustCompile(`<th>` + regexp.QuoteMeta(th) + `</th><td>(\d+)`)
	m := re.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page shows no %q:\n%s", th, dom)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBrowser(t *testing.T) {
	b := newBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r := wordCount(t, ctx, "wordcount", nil, 0)
	reg := monitor.NewRegistry()
	if err := reg.Add(r, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "worker.json")
	lw, err := logfile.Open(logfile.Config{Path: logPath})
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Close()
	log := slog.New(slog.NewJSONHandler(lw, nil))
	ts := serve(t, reg, monitor.Config{LogFile: logPath, Logger: log})
	if err := r.WaitCommitted(ctx, 1); err != nil {
		t.Fatal(err)
	}
	log.Info("first commit", "topology", r.Name(), "committed_txid", uint64(r.Committed()))
	log.Warn("batch failed", "topology", r.Name(), "txid", 42, "err", "cassandra: timeout")
	page := ts.URL + "/ui/topologies/" + url.PathEscape(r.Name())

	first := b.dom(ctx, page)
	for _, want := range []string{"<h1>wordcount", "Components", "$master", "Counters over time", "<td>10m</td>",
		`<svg xmlns="http://www.w3.org/2000/svg" class="topology-graph"`,
		`<text class="name" `, ">$master</text>", ">spout-sentences</text>", ">b-1</text>", `marker-end="url(#arrow)"`} {
		if !bytes.Contains([]byte(first), []byte(want)) {
			t.Fatalf("the page lacks %q:\n%s", want, first)
		}
	}
	txid1, batches1 := counter(t, first, "committed txid"), counter(t, first, "batches committed")
	if err := r.WaitCommitted(ctx, txn.TxID(txid1+2)); err != nil {
		t.Fatal(err)
	}
	second := b.dom(ctx, page)
	txid2, batches2 := counter(t, second, "committed txid"), counter(t, second, "batches committed")
	if txid2 <= txid1 || batches2 <= batches1 {
		t.Fatalf("the counters did not move between two loads: committed txid %d then %d, batches %d then %d",
			txid1, txid2, batches1, batches2)
	}

	shot := filepath.Join(t.ArtifactDir(), "topology.png")
	img := b.screenshot(ctx, page, shot, 1280, 1100)
	t.Logf("screenshot: %s", shot)
	defer func() {
		if t.Failed() {
			t.Logf("the page when it failed:\n%s", b.dom(ctx, page))
		}
	}()
	// The graph is drawn: the boxes' fills (svgStyle in graph.go) cover
	// most of their 120x46 pixels at least, text aside: one spout box
	// ($master) and two bolt boxes.
	spouts, bolts := pixels(img, color.RGBA{0xea, 0xf6, 0xec, 0xff}), pixels(img, color.RGBA{0xee, 0xf3, 0xfb, 0xff})
	if spouts < 3000 || bolts < 2*3000 {
		t.Fatalf("the graph is not drawn in the screenshot: %d spout and %d bolt pixels", spouts, bolts)
	}

	// The log viewer, searching the log file.
	logs := ts.URL + "/ui/logs?q=txid"
	dom := b.dom(ctx, logs)
	for _, want := range []string{"first commit", "batch failed", `class="level-WARN"`, `err="cassandra: timeout"`} {
		if !strings.Contains(dom, want) {
			t.Fatalf("the log page lacks %q:\n%s", want, dom)
		}
	}
	if strings.Index(dom, "batch failed") > strings.Index(dom, "first commit") {
		t.Fatalf("the log page is not newest first:\n%s", dom)
	}
	logShot := filepath.Join(t.ArtifactDir(), "logs.png")
	b.screenshot(ctx, logs, logShot, 1280, 400)
	t.Logf("screenshot: %s", logShot)
}
