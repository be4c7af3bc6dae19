package nemesis

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the golden scripts of testdata/: the inputs are
//
//	generate seed=N [episodes=N] [kinds=a,b] [second=P]   the schedule's Format
//	drops kind=K target=H [peers=a,b] [percent=P] [sides=a,b|c,d]   the fault's drops
//
// Rewrite them after a deliberate change with
// go test ./internal/nemesis -run TestDataDriven -rewrite, and review the diff.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			args := map[string]string{}
			for _, a := range d.CmdArgs {
				args[a.Key] = strings.Join(a.Vals, ",")
			}
			switch d.Cmd {
			case "generate":
				var cfg Config
				var seed uint64
				fmt.Sscan(args["seed"], &seed)
				if v, ok := args["episodes"]; ok {
					fmt.Sscan(v, &cfg.Episodes)
				}
				if v, ok := args["second"]; ok {
					fmt.Sscan(v, &cfg.SecondPercent)
				}
				if v, ok := args["kinds"]; ok {
					for _, k := range strings.Split(v, ",") {
						kind, err := ParseKind(k)
						if err != nil {
							return err.Error() + "\n"
						}
						cfg.Kinds = append(cfg.Kinds, kind)
					}
				}
				s, err := Generate(seed, cfg)
				if err != nil {
					return err.Error() + "\n"
				}
				return s.Format()
			case "drops":
				kind, err := ParseKind(args["kind"])
				if err != nil {
					return err.Error() + "\n"
				}
				f := Fault{Kind: kind, Target: At(Host(args["target"]))}
				fmt.Sscan(args["percent"], &f.Percent)
				for _, p := range strings.Split(args["peers"], ",") {
					if p != "" {
						f.Peers = append(f.Peers, Host(p))
					}
				}
				if s, ok := args["sides"]; ok {
					a, b, _ := strings.Cut(s, "|")
					for i, side := range []string{a, b} {
						for _, h := range strings.Split(side, ",") {
							f.Sides[i] = append(f.Sides[i], Host(h))
						}
					}
				}
				var b strings.Builder
				fmt.Fprintf(&b, "%s\n", f)
				for _, dr := range f.Drops(DefaultCluster(), Host(args["target"])) {
					fmt.Fprintf(&b, "%s\n", dr)
				}
				return b.String()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// TestGenerateIsDeterministic: a seed gives one schedule; another seed
// another.
func TestGenerateIsDeterministic(t *testing.T) {
	for seed := range uint64(50) {
		a, err := Generate(seed, Config{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Generate(seed, Config{})
		if a.Format() != b.Format() {
			t.Fatalf("seed %d: two schedules:\n%s\n%s", seed, a.Format(), b.Format())
		}
		c, _ := Generate(seed+1, Config{})
		if a.Format()[10:] == c.Format()[10:] {
			t.Errorf("seeds %d and %d: the same episodes", seed, seed+1)
		}
	}
}

// TestGenerateProperties checks, over many seeds, what every schedule
// promises: the holds' bounds, every kind first in some episode, each
// kind once before any repeats, second faults within the hold, a split
// with a majority of etcd on its first side, targets that exist.
func TestGenerateProperties(t *testing.T) {
	c := DefaultCluster()
	hosts := c.Hosts()
	cfg := Config{Episodes: len(Kinds()) + 3}
	firsts := map[Kind]int{}
	seconds := 0
	for seed := range uint64(200) {
		s, err := Generate(seed, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Episodes) != cfg.Episodes {
			t.Fatalf("seed %d: %d episodes", seed, len(s.Episodes))
		}
		var seen []Kind
		for i, e := range s.Episodes {
			k := e.Faults[0].Kind
			firsts[k]++
			if i < len(Kinds()) {
				if slices.Contains(seen, k) {
					t.Fatalf("seed %d: %s twice in the first %d episodes", seed, k, len(Kinds()))
				}
				seen = append(seen, k)
			}
			long := k == Freeze || k == WorkerEtcd || k == EtcdDown
			if e.Hold < 8*time.Second || e.Hold > 16*time.Second && !long || long && e.Hold < 15*time.Second {
				t.Fatalf("seed %d episode %d (%s): hold %v", seed, i+1, k, e.Hold)
			}
			for j, f := range e.Faults {
				if f.At < 0 || f.At >= e.Hold {
					t.Fatalf("seed %d episode %d: fault %s at %v, hold %v", seed, i+1, f, f.At, e.Hold)
				}
				if j > 0 {
					seconds++
					if f.Kind != Kill && f.Kind != Pause {
						t.Fatalf("seed %d: second fault %s", seed, f)
					}
				}
				if f.Kind == Kill && (f.For < time.Second || f.At+f.For > e.Hold) {
					t.Fatalf("seed %d: %s at %v, hold %v", seed, f, f.At, e.Hold)
				}
				if f.Target.Dynamic() && !slices.Contains(hosts, f.Fallback) {
					t.Fatalf("seed %d: %s has no fallback", seed, f)
				}
				if !f.Target.Dynamic() && f.Kind != Split && !slices.Contains(hosts, Host(f.Target)) {
					t.Fatalf("seed %d: %s: no host %q", seed, f, f.Target)
				}
				if f.Kind == Split {
					checkSplit(t, c, f)
				}
			}
		}
	}
	for _, k := range Kinds() {
		if firsts[k] == 0 {
			t.Errorf("kind %s never drawn", k)
		}
	}
	if seconds == 0 {
		t.Error("no episode had a second fault")
	}
}

func checkSplit(t *testing.T, c Cluster, f Fault) {
	t.Helper()
	all := slices.Concat(f.Sides[0], f.Sides[1])
	slices.Sort(all)
	want := c.Hosts()
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Fatalf("split %s: not every host once", f)
	}
	n := 0
	for _, h := range f.Sides[0] {
		if slices.Contains(c.Etcd, h) {
			n++
		}
	}
	if n <= len(c.Etcd)/2 {
		t.Fatalf("split %s: no etcd majority on the first side", f)
	}
	for _, side := range f.Sides {
		if len(side) == 0 {
			t.Fatalf("split %s: an empty side", f)
		}
	}
}

// TestDropsCutExactlyTheLinks checks each network kind against the links
// it must cut and those it must leave: share0-peers keeps etcd, the
// nimbuses and the services; worker-etcd keeps the services; one-way
// keeps the way back.
func TestDropsCutExactlyTheLinks(t *testing.T) {
	c := DefaultCluster()
	cut := func(ds []Drop, from, to Host) bool {
		for _, d := range ds {
			if d.From == from && d.To == to {
				return true
			}
		}
		return false
	}
	d := Fault{Kind: Share0Peers, Target: Share0}.Drops(c, "w2")
	if !cut(d, "w2", "w1") || !cut(d, "w3", "w2") || cut(d, "w2", "e1") || cut(d, "w2", "svc") || cut(d, "w2", "n1") {
		t.Errorf("share0-peers: %v", d)
	}
	d = Fault{Kind: WorkerEtcd, Target: At("w1")}.Drops(c, "w1")
	if !cut(d, "w1", "e3") || !cut(d, "e1", "w1") || cut(d, "w1", "svc") || cut(d, "w1", "w2") || len(d) != 6 {
		t.Errorf("worker-etcd: %v", d)
	}
	d = Fault{Kind: OneWay, Target: At("n1"), Peers: []Host{"e1", "w3"}}.Drops(c, "n1")
	if !cut(d, "n1", "e1") || !cut(d, "n1", "w3") || cut(d, "e1", "n1") || len(d) != 2 {
		t.Errorf("one-way: %v", d)
	}
	d = Fault{Kind: Isolate, Target: At("svc")}.Drops(c, "svc")
	if len(d) != 2*(len(c.Hosts())-1) || cut(d, "e1", "e2") {
		t.Errorf("isolate: %v", d)
	}
	d = Fault{Kind: Loss, Target: At("e2"), Percent: 20}.Drops(c, "e2")
	for _, x := range d {
		if x.Percent != 20 {
			t.Errorf("loss: %v", d)
		}
	}
	if d := (Fault{Kind: Kill, Role: Etcd, Target: At("e1")}).Drops(c, "e1"); d != nil {
		t.Errorf("kill has drops %v", d)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{Episodes: -1},
		{MinHold: 20 * time.Second, MaxHold: 10 * time.Second},
		{Kinds: []Kind{"flood"}},
		{SecondPercent: 101},
		{Cluster: Cluster{Etcd: []Host{"a"}, Nimbus: []Host{"a"}, Workers: []Host{"w"}, Services: "s"}},
	}
	for _, c := range bad {
		if _, err := Generate(1, c); !errors.Is(err, ErrInvalid) {
			t.Errorf("Generate(%+v) = %v, want ErrInvalid", c, err)
		}
	}
}
