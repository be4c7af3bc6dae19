package cli

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/trident"
)

func TestCapacityFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		want    meta.Resources
		wantErr bool
	}{
		{[]string{"--cpu-capacity", "400", "--memory-capacity", "8192"}, meta.Resources{CPU: 400, MemoryMB: 8192}, false},
		{[]string{"--cpu-capacity", "0", "--memory-capacity", "0"}, meta.Resources{}, false},
		{[]string{"--cpu-capacity", "-1"}, meta.Resources{}, true},
		{[]string{"--memory-capacity", "-1"}, meta.Resources{}, true},
	} {
		var cf capacityFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		cf.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		got, err := cf.resources()
		if (err != nil) != c.wantErr || (!c.wantErr && got != c.want) {
			t.Errorf("%v: %v, %v; want %v (error %v)", c.args, got, err, c.want, c.wantErr)
		}
	}
	var cf capacityFlags
	cf.register(flag.NewFlagSet("t", flag.ContinueOnError))
	if cf.cpu < 100 {
		t.Errorf("default --cpu-capacity %d: want 100 per core", cf.cpu)
	}
}

func TestParseMemTotal(t *testing.T) {
	for in, want := range map[string]int{
		"MemTotal:       16318480 kB\nMemFree: 1 kB\n": 15936,
		"MemFree: 1 kB\n":     0,
		"MemTotal: lots kB\n": 0,
	} {
		if got := parseMemTotalMB(strings.NewReader(in)); got != want {
			t.Errorf("%q: %d MB, want %d", in, got, want)
		}
	}
}

// TestDemandSharesAgree: the nimbus deals a topology's demand to its
// shares (meta.Demand.Shares) as the workers place its executors
// (trident.Demand.Shares).
func TestDemandSharesAgree(t *testing.T) {
	td := trident.Demand{Master: trident.Resources{CPU: 7, MemoryMB: 70}}
	md := meta.Demand{Master: meta.Resources{CPU: 7, MemoryMB: 70}}
	for i := range 11 {
		td.Executors = append(td.Executors, trident.Resources{CPU: 10 * i, MemoryMB: 100*i + 1})
		md.Executors = append(md.Executors, meta.Resources{CPU: 10 * i, MemoryMB: 100*i + 1})
	}
	for n := 1; n <= 6; n++ {
		ts, ms := td.Shares(n), md.Shares(n)
		if len(ts) != len(ms) {
			t.Fatalf("%d shares: trident %v, meta %v", n, ts, ms)
		}
		for i := range ts {
			if ts[i].CPU != ms[i].CPU || ts[i].MemoryMB != ms[i].MemoryMB {
				t.Fatalf("%d shares: trident %v, meta %v", n, ts, ms)
			}
		}
	}
}
