package room

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// GenConfig describes a generated day of events. The zero value, with
// defaults filled in, is 200 people visiting 12 rooms about 10 times each
// on 2026-01-05.
type GenConfig struct {
	People          int       // people with a badge; 0 means 200
	Rooms           int       // rooms with a reader; 0 means 12
	VisitsPerPerson int       // average visits per person; 0 means 10
	Day             time.Time // the day (its UTC date is used); zero means 2026-01-05
	Seed            uint64    // the same seed gives the same records

	// NightShift is the share of people who work from the evening into
	// the next morning, so that their visits span midnight. Negative
	// means none; 0 means 0.1.
	NightShift float64
	// OutOfOrder is the share of visits whose LEAVE is written before
	// their ENTER.
	OutOfOrder float64
	// Malformed is the share of extra records that are not valid events.
	Malformed float64
}

func (c GenConfig) withDefaults() GenConfig {
	if c.People == 0 {
		c.People = 200
	}
	if c.Rooms == 0 {
		c.Rooms = 12
	}
	if c.VisitsPerPerson == 0 {
		c.VisitsPerPerson = 10
	}
	if c.Day.IsZero() {
		c.Day = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	}
	c.Day = c.Day.UTC().Truncate(24 * time.Hour)
	if c.NightShift == 0 {
		c.NightShift = 0.1
	}
	return c
}

// Validate reports counts and shares out of range.
func (c GenConfig) Validate() error {
	var errs []error
	if c.People < 0 || c.Rooms < 0 || c.VisitsPerPerson < 0 {
		errs = append(errs, fmt.Errorf("room: people, rooms and visits per person must not be negative"))
	}
	for name, f := range map[string]float64{"out-of-order": c.OutOfOrder, "malformed": c.Malformed} {
		if f < 0 || f > 1 {
			errs = append(errs, fmt.Errorf("room: the %s share %v is not between 0 and 1", name, f))
		}
	}
	if c.NightShift > 1 {
		errs = append(errs, fmt.Errorf("room: the night-shift share %v is above 1", c.NightShift))
	}
	return errors.Join(errs...)
}

// Record is one generated Kafka record: an event keyed by its visit (so
// that both events of a visit land in the same partition), or a malformed
// record.
type Record struct {
	Key       []byte
	Value     []byte
	Malformed bool
}

// Generator writes a day of events in time order, as badge readers would
// report them, without holding the day in memory: it keeps the next
// event of every person in a heap.
type Generator struct {
	cfg    GenConfig
	rng    *rand.Rand
	people personHeap
	seq    int
	bad    int
	queued []Record
}

// NewGenerator returns a generator of the day cfg describes.
func NewGenerator(cfg GenConfig) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	g := &Generator{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	for i := range cfg.People {
		p := &person{id: fmt.Sprintf("p-%05d", i)}
		if g.rng.Float64() < cfg.NightShift {
			p.next = cfg.Day.Add(20*time.Hour + g.jitter(90*time.Minute))
		} else {
			p.next = cfg.Day.Add(7*time.Hour + g.jitter(3*time.Hour))
		}
		p.visitsLeft = cfg.VisitsPerPerson/2 + g.rng.IntN(cfg.VisitsPerPerson+1)
		if p.visitsLeft > 0 {
			g.people = append(g.people, p)
		}
	}
	heap.Init(&g.people)
	return g, nil
}

// Estimate returns about how many records the generator writes, for
// progress reporting.
func (g *Generator) Estimate() int {
	events := g.cfg.People * g.cfg.VisitsPerPerson * 2
	return events + int(float64(events)*g.cfg.Malformed)
}

// Next returns the next record, or false after the last one.
func (g *Generator) Next() (Record, bool) {
	if len(g.queued) == 0 && !g.fill() {
		return Record{}, false
	}
	r := g.queued[0]
	g.queued = g.queued[1:]
	return r, true
}

// fill queues the records of the earliest person's next visit event.
func (g *Generator) fill() bool {
	if len(g.people) == 0 {
		return false
	}
	if g.cfg.Malformed > 0 && g.rng.Float64() < g.cfg.Malformed {
		g.queued = append(g.queued, g.malformed())
	}
	p := g.people[0]
	if p.open == nil {
		v := g.visit(p)
		if g.rng.Float64() < g.cfg.OutOfOrder {
			g.queued = append(g.queued, g.record(v, Leave, v.End), g.record(v, Enter, v.Start))
			g.finishVisit(p, v)
		} else {
			g.queued = append(g.queued, g.record(v, Enter, v.Start))
			p.open, p.next = &v, v.End
			heap.Fix(&g.people, 0)
		}
		return true
	}
	v := *p.open
	g.queued = append(g.queued, g.record(v, Leave, v.End))
	g.finishVisit(p, v)
	return true
}

// visit plans p's next visit, starting at p.next.
func (g *Generator) visit(p *person) Period {
	p.visits++
	start := p.next
	stay := 3*time.Minute + g.jitter(87*time.Minute)
	return Period{
		Visit: fmt.Sprintf("v-%s-%03d", p.id, p.visits), Person: p.id,
		Room:  fmt.Sprintf("room-%02d", g.rng.IntN(g.cfg.Rooms)+1),
		Start: start, End: start.Add(stay),
	}
}

// finishVisit schedules p's next visit after v, or retires p.
func (g *Generator) finishVisit(p *person, v Period) {
	p.open = nil
	p.visitsLeft--
	if p.visitsLeft <= 0 {
		heap.Pop(&g.people)
		return
	}
	p.next = v.End.Add(g.jitter(30 * time.Minute))
	heap.Fix(&g.people, 0)
}

func (g *Generator) record(v Period, k Kind, ts time.Time) Record {
	g.seq++
	e := Event{ID: fmt.Sprintf("e-%08d", g.seq), Visit: v.Visit, Person: v.Person, Room: v.Room, Kind: k, Time: ts}
	return Record{Key: []byte(v.Visit), Value: e.Encode()}
}

// malformed returns a record that Decode rejects, of one of several kinds
// seen in practice.
func (g *Generator) malformed() Record {
	g.bad++
	var v string
	switch g.rng.IntN(4) {
	case 0:
		v = `{"id":"x-` + fmt.Sprint(g.bad) + `","visit":"v-trunc`
	case 1:
		v = `{"id":"x-` + fmt.Sprint(g.bad) + `","visit":"v-1","person":"p-1","type":"ENTER","ts":"2026-01-05T10:00:00Z"}`
	case 2:
		v = `{"id":"x-` + fmt.Sprint(g.bad) + `","visit":"v-1","person":"p-1","room":"room-01","type":"WAVE","ts":"2026-01-05T10:00:00Z"}`
	default:
		v = "\x00\x01 not json " + fmt.Sprint(g.bad)
	}
	return Record{Key: []byte(fmt.Sprintf("bad-%d", g.bad)), Value: []byte(v), Malformed: true}
}

// jitter returns a random duration in [0, d), to the second.
func (g *Generator) jitter(d time.Duration) time.Duration {
	return time.Duration(g.rng.Int64N(int64(d/time.Second))) * time.Second
}

// person is one badge holder's schedule.
type person struct {
	id         string
	next       time.Time // the time of the next event
	visits     int       // visits started
	visitsLeft int
	open       *Period // the visit in progress, whose LEAVE is next
}

// personHeap orders people by their next event, then by id, so that the
// order is the same on every run.
type personHeap []*person

func (h personHeap) Len() int { return len(h) }
func (h personHeap) Less(i, j int) bool {
	if !h[i].next.Equal(h[j].next) {
		return h[i].next.Before(h[j].next)
	}
	return h[i].id < h[j].id
}
func (h personHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *personHeap) Push(x any)   { *h = append(*h, x.(*person)) }
func (h *personHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
