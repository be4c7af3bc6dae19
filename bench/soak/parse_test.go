package main

import (
	"flag"
	"strings"
	"testing"
)

const statusText = `Name:	roompresence
Umask:	0022
State:	S (sleeping)
VmPeak:	 2315428 kB
VmRSS:	  140700 kB
RssAnon:	   81200 kB
RssFile:	   59500 kB
RssShmem:	       0 kB
Threads:	9
`

func TestParseStatus(t *testing.T) {
	s, err := parseStatus(statusText)
	if err != nil {
		t.Fatal(err)
	}
	want := procStatus{vmRSS: 140700 << 10, rssAnon: 81200 << 10, rssFile: 59500 << 10, threads: 9}
	if s != want {
		t.Fatalf("parseStatus = %+v, want %+v", s, want)
	}
	if _, err := parseStatus(strings.Replace(statusText, "RssAnon", "RssX", 1)); err == nil {
		t.Fatal("a status without RssAnon parsed")
	}
	if _, err := parseStatus(strings.Replace(statusText, "140700 kB", "140700 MB", 1)); err == nil {
		t.Fatal("a size not in kB parsed")
	}
}

func TestParseMetric(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines_total_like{a="b"} 7
go_goroutines 42
go_memstats_heap_inuse_bytes 1.2345e+07
`
	if v, err := parseMetric(strings.NewReader(text), "go_goroutines"); err != nil || v != 42 {
		t.Fatalf("go_goroutines = %v, %v; want 42", v, err)
	}
	if v, err := parseMetric(strings.NewReader(text), "go_memstats_heap_inuse_bytes"); err != nil || v != 12345000 {
		t.Fatalf("heap = %v, %v; want 12345000", v, err)
	}
	if _, err := parseMetric(strings.NewReader(text), "go_threads"); err == nil {
		t.Fatal("a missing metric was found")
	}
}

func TestParseRunLine(t *testing.T) {
	cases := []struct {
		line string
		want runLine
	}{
		{"run: monitor (web UI, /api/v1, /metrics) on http://127.0.0.1:43361", runLine{monitorURL: "http://127.0.0.1:43361"}},
		{"run: injected worker panic in timeline", runLine{injected: true}},
		{"run: reading room-events from [127.0.0.1:1] into the embedded store in /tmp/x", runLine{}},
		{"run: first commit 104ms after start (txid 1)", runLine{}},
	}
	for _, c := range cases {
		if got := parseRunLine(c.line); got != c.want {
			t.Errorf("parseRunLine(%q) = %+v, want %+v", c.line, got, c.want)
		}
	}
	l := parseRunLine("run:    34900 events/s  committed txid 127    lag 43635    dead letters 31    crashes 9")
	if l.progress == nil || l.progress.committed != 127 || l.progress.lag != 43635 || l.progress.crashes != 9 {
		t.Fatalf("progress line parsed as %+v", l.progress)
	}
}

// The days the feed generates follow each other without sharing a visit
// or an event id, so verify's expected results are those of one stream.
func TestDaysNeverRepeatAVisit(t *testing.T) {
	d := &days{people: 5, rooms: 3, seed: 1}
	visits := map[string]int{}
	ids := map[string]bool{}
	for range 2000 {
		m, err := d.next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(string(m.Key), "bad-") {
			continue
		}
		visits[string(m.Key)]++
		var id string
		if i := strings.Index(string(m.Value), `"id":"`); i >= 0 {
			id = string(m.Value[i+6:])
			id = id[:strings.IndexByte(id, '"')]
		}
		if ids[id] {
			t.Fatalf("event id %q twice", id)
		}
		ids[id] = true
	}
	if d.day < 3 {
		t.Fatalf("2000 records covered %d days of 5 people, want several", d.day)
	}
	for v, n := range visits {
		if n > 2 {
			t.Fatalf("visit %s has %d events, want at most an ENTER and a LEAVE", v, n)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	var ok config
	ok.register(newFlagSet())
	if err := ok.validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for name, mutate := range map[string]func(*config){
		"interval 0":          func(c *config) { c.interval = 0 },
		"no duration":         func(c *config) { c.duration = 0 },
		"negative rate":       func(c *config) { c.rate = -1 },
		"faults above 1":      func(c *config) { c.faultRetry, c.faultPanic = 0.7, 0.7 },
		"negative tolerance":  func(c *config) { c.rssTol.rel = -1 },
		"events without mark": func(c *config) { c.events, c.mark = 10, 0 },
	} {
		c := ok
		mutate(&c)
		if err := c.validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("soak", flag.ContinueOnError) }
