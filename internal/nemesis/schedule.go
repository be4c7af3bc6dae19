package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Config shapes the schedules Generate draws. The zero value is the
// harness's default.
type Config struct {
	// Cluster is the cluster the faults are about (zero: DefaultCluster).
	Cluster Cluster
	// Episodes per schedule (zero: 4).
	Episodes int
	// MinHold and MaxHold bound how long an episode's faults last before
	// the heal (zero: 8s and 16s).
	MinHold, MaxHold time.Duration
	// LongHold is the least hold of the faults that must outlast the
	// leases to do anything (Freeze, WorkerEtcd, EtcdDown; zero: 15s):
	// a node is declared dead, and its topology moves, only after its
	// supervisor's and its worker's leases have both expired.
	LongHold time.Duration
	// Kinds are the kinds an episode's first fault is drawn from, each
	// once before any repeats (nil: every kind).
	Kinds []Kind
	// SecondPercent is the chance, in percent, that an episode has a
	// second fault, a Kill or a Pause, while the first holds (zero: 40;
	// negative: never).
	SecondPercent int
}

func (c Config) withDefaults() Config {
	if c.Cluster.Etcd == nil && c.Cluster.Nimbus == nil && c.Cluster.Workers == nil && c.Cluster.Services == "" {
		c.Cluster = DefaultCluster()
	}
	if c.Episodes == 0 {
		c.Episodes = 4
	}
	if c.MinHold == 0 {
		c.MinHold = 8 * time.Second
	}
	if c.MaxHold == 0 {
		c.MaxHold = 16 * time.Second
	}
	if c.LongHold == 0 {
		c.LongHold = 15 * time.Second
	}
	if c.Kinds == nil {
		c.Kinds = Kinds()
	}
	if c.SecondPercent == 0 {
		c.SecondPercent = 40
	}
	return c
}

// Validate checks the configuration after its defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := c.Cluster.Validate(); err != nil {
		return err
	}
	if len(c.Cluster.Etcd) < 2 {
		return fmt.Errorf("%w: a split needs at least two etcd members", ErrInvalid)
	}
	switch {
	case c.Episodes < 1:
		return fmt.Errorf("%w: episodes %d", ErrInvalid, c.Episodes)
	case c.MinHold < time.Second || c.MaxHold < c.MinHold || c.LongHold < 0:
		return fmt.Errorf("%w: holds %v..%v, long %v", ErrInvalid, c.MinHold, c.MaxHold, c.LongHold)
	case len(c.Kinds) == 0:
		return fmt.Errorf("%w: no fault kinds", ErrInvalid)
	case c.SecondPercent > 100:
		return fmt.Errorf("%w: second fault chance %d%%", ErrInvalid, c.SecondPercent)
	}
	for _, k := range c.Kinds {
		if _, err := ParseKind(string(k)); err != nil {
			return err
		}
	}
	return nil
}

// Episode is faults held together, then healed.
type Episode struct {
	Hold   time.Duration // from the episode's start to the heal
	Faults []Fault       // by start time
}

// Schedule is the seeded list of episodes of one run of the harness.
type Schedule struct {
	Seed     uint64
	Episodes []Episode
}

// Generate draws the schedule of seed. The same seed and configuration
// give the same schedule, in any process (math/rand/v2's PCG).
func Generate(seed uint64, cfg Config) (Schedule, error) {
	if err := cfg.Validate(); err != nil {
		return Schedule{}, err
	}
	cfg = cfg.withDefaults()
	g := &generator{r: rand.New(rand.NewPCG(seed, 0x6e656d65736973)), c: cfg.Cluster}
	s := Schedule{Seed: seed}
	var deck []Kind
	for range cfg.Episodes {
		if len(deck) == 0 {
			deck = slices.Clone(cfg.Kinds)
			g.r.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
		}
		kind := deck[0]
		deck = deck[1:]
		hold := cfg.MinHold + g.dur(cfg.MaxHold-cfg.MinHold)
		if kind == Freeze || kind == WorkerEtcd || kind == EtcdDown {
			hold = max(hold, cfg.LongHold)
		}
		first := g.fault(kind)
		if first.Kind == Kill {
			first.For = min(first.For, hold/2)
		}
		e := Episode{Hold: hold, Faults: []Fault{first}}
		if cfg.SecondPercent > 0 && g.r.IntN(100) < cfg.SecondPercent {
			second := g.fault([]Kind{Kill, Pause}[g.r.IntN(2)])
			second.At = round(hold/4 + g.dur(hold/4))
			second.For = min(second.For, hold-second.At)
			e.Faults = append(e.Faults, second)
		}
		s.Episodes = append(s.Episodes, e)
	}
	return s, nil
}

// generator draws faults.
type generator struct {
	r *rand.Rand
	c Cluster
}

// dur returns a random duration in [0, d), to 100ms.
func (g *generator) dur(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return round(time.Duration(g.r.Int64N(int64(d))))
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

func (g *generator) pick(hs []Host) Host { return hs[g.r.IntN(len(hs))] }

// fault draws a fault of kind k, starting at the episode's start.
func (g *generator) fault(k Kind) Fault {
	c := g.c
	f := Fault{Kind: k}
	switch k {
	case Isolate:
		f.Target = At(g.pick(c.Hosts()))
	case Split:
		f.Sides = g.split()
	case IsolateLeader:
		f.Target, f.Fallback = LeaderNimbus, g.pick(c.Nimbus)
	case Share0Peers:
		f.Target, f.Fallback = Share0, g.pick(c.Workers)
	case WorkerEtcd:
		f.Fallback = g.pick(c.Workers)
		f.Target = Share0
		if g.r.IntN(2) == 0 {
			f.Target, f.Fallback = At(f.Fallback), ""
		}
	case OneWay:
		if g.r.IntN(2) == 0 { // the services' answers lost: writes land, their acknowledgements do not
			f.Target, f.Peers = At(c.Services), slices.Clone(c.Workers)
			break
		}
		t := g.pick(c.Hosts())
		f.Target = At(t)
		others := c.others(t)
		g.r.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
		f.Peers = others[:1+g.r.IntN(3)]
		slices.SortFunc(f.Peers, g.byOrder)
	case Loss:
		f.Target = At(g.pick(c.Hosts()))
		f.Percent = []int{10, 20, 30, 50}[g.r.IntN(4)]
	case Slow:
		f.Target = At(g.pick(c.Hosts()))
		f.Delay = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond}[g.r.IntN(3)]
	case Kill, Pause:
		f.Role, f.Target, f.Fallback = g.daemon()
		if k == Kill {
			f.For = time.Second + g.dur(4*time.Second)
		}
	case EtcdDown:
		f.Role, f.Target = Etcd, At(g.pick(c.Etcd))
	case Freeze:
		f.Target, f.Fallback = Share0, g.pick(c.Workers)
	}
	return f
}

// daemon draws a daemon to signal: its role, its host (or a dynamic
// target) and the fallback host of a dynamic one.
func (g *generator) daemon() (Role, Target, Host) {
	c := g.c
	switch g.r.IntN(4) {
	case 0:
		return Etcd, At(g.pick(c.Etcd)), ""
	case 1:
		if g.r.IntN(2) == 0 {
			return Nimbus, LeaderNimbus, g.pick(c.Nimbus)
		}
		return Nimbus, At(g.pick(c.Nimbus)), ""
	case 2:
		if g.r.IntN(2) == 0 {
			return Supervisor, Share0, g.pick(c.Workers)
		}
		return Supervisor, At(g.pick(c.Workers)), ""
	default:
		return Worker, []Target{Share0, Share1}[g.r.IntN(2)], g.pick(c.Workers)
	}
}

// split draws two sides: a majority of the etcd members on the first,
// the rest on the second, every other host on either (neither side left
// without a non-etcd host).
func (g *generator) split() [2][]Host {
	c := g.c
	etcd := slices.Clone(c.Etcd)
	g.r.Shuffle(len(etcd), func(i, j int) { etcd[i], etcd[j] = etcd[j], etcd[i] })
	maj := len(etcd)/2 + 1
	sides := [2][]Host{slices.Clone(etcd[:maj]), slices.Clone(etcd[maj:])}
	rest := slices.Concat(c.Nimbus, c.Workers, []Host{c.Services})
	n := [2]int{}
	for _, h := range rest {
		s := g.r.IntN(2)
		sides[s] = append(sides[s], h)
		n[s]++
	}
	for s := range 2 {
		if n[s] == 0 { // move one host over
			other := 1 - s
			i := len(sides[other]) - 1
			sides[s] = append(sides[s], sides[other][i])
			sides[other] = sides[other][:i]
		}
	}
	slices.SortFunc(sides[0], g.byOrder)
	slices.SortFunc(sides[1], g.byOrder)
	return sides
}

// byOrder orders hosts as Cluster.Hosts lists them.
func (g *generator) byOrder(a, b Host) int {
	hs := g.c.Hosts()
	return slices.Index(hs, a) - slices.Index(hs, b)
}

// Op is what an Action does.
type Op string

// The operations of a schedule.
const (
	Start   Op = "start"   // start a fault
	Restart Op = "restart" // start a killed daemon again (not a worker: its supervisor does)
	Heal    Op = "heal"    // end every fault of the episode
)

// Action is one timed step of a schedule.
type Action struct {
	Episode int           // from 1
	At      time.Duration // after the episode's start
	Op      Op
	Fault   Fault // the fault started, or the killed daemon's (not for Heal)
}

// String returns "+4.1s start kill worker@share0 for 3s".
func (a Action) String() string {
	if a.Op == Heal {
		return fmt.Sprintf("+%v heal", a.At)
	}
	if a.Op == Restart {
		return fmt.Sprintf("+%v restart %s@%s", a.At, a.Fault.Role, strings.TrimPrefix(string(a.Fault.Target), "@"))
	}
	return fmt.Sprintf("+%v %s %s", a.At, a.Op, a.Fault)
}

// Actions returns the timed steps of episode i (from 0), in time order:
// each fault's start, the restart of each killed daemon other than a
// worker, and the heal last.
func (s Schedule) Actions(i int) []Action {
	e := s.Episodes[i]
	var out []Action
	for _, f := range e.Faults {
		out = append(out, Action{Episode: i + 1, At: f.At, Op: Start, Fault: f})
		if f.Kind == Kill && f.Role != Worker && f.At+f.For < e.Hold {
			out = append(out, Action{Episode: i + 1, At: f.At + f.For, Op: Restart, Fault: f})
		}
	}
	slices.SortStableFunc(out, func(a, b Action) int { return int(a.At - b.At) })
	return append(out, Action{Episode: i + 1, At: e.Hold, Op: Heal})
}

// Format returns the schedule as text, one action a line: the canonical
// form the golden files pin and the harness writes to its timeline.
func (s Schedule) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d episodes\n", s.Seed, len(s.Episodes))
	for i, e := range s.Episodes {
		fmt.Fprintf(&b, "episode %d: hold %v\n", i+1, e.Hold)
		for _, a := range s.Actions(i) {
			fmt.Fprintf(&b, "  %s\n", a)
		}
	}
	return b.String()
}

// Kinds returns the kinds of episode i's faults, the first first.
func (e Episode) Kinds() []Kind {
	out := make([]Kind, len(e.Faults))
	for i, f := range e.Faults {
		out[i] = f.Kind
	}
	return out
}
