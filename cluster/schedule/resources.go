package schedule

import (
	"errors"
	"fmt"
	"strings"
)

// Resources is an amount of a machine: CPU in percent of one core (100
// is a core, as Storm counts it) and memory in MB.
type Resources struct {
	CPU      int
	MemoryMB int
}

// Add returns the sum of r and o.
func (r Resources) Add(o Resources) Resources {
	return Resources{CPU: r.CPU + o.CPU, MemoryMB: r.MemoryMB + o.MemoryMB}
}

// Sub returns r less o.
func (r Resources) Sub(o Resources) Resources {
	return Resources{CPU: r.CPU - o.CPU, MemoryMB: r.MemoryMB - o.MemoryMB}
}

// IsZero reports whether r is nothing.
func (r Resources) IsZero() bool { return r == Resources{} }

func (r Resources) String() string { return fmt.Sprintf("%d%% CPU and %d MB", r.CPU, r.MemoryMB) }

// ErrUnfit is wrapped by every UnfitError.
var ErrUnfit = errors.New("schedule: topology does not fit")

// UnfitError tells why a topology that declares resources was not
// placed: it needs Workers workers of Need each, only Placed of them fit
// within the capacity the supervisors have free, and MostFree is the
// most any supervisor with a free slot had left.
type UnfitError struct {
	Topology string
	Workers  int
	Need     Resources // per worker
	Placed   int
	MostFree Resources // the largest CPU and the largest memory free on a supervisor with a free slot
	NoSlot   bool      // no supervisor had a free slot at all
}

func (e *UnfitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule: topology %q does not fit: it needs %d worker(s) of %s each; worker %d of them",
		e.Topology, e.Workers, e.Need, e.Placed+1)
	if e.NoSlot {
		b.WriteString(" found no free slot")
		return b.String()
	}
	fmt.Fprintf(&b, " fits nowhere: the most any supervisor has free is %s", e.MostFree)
	var missing []string
	if e.Need.CPU > e.MostFree.CPU {
		missing = append(missing, fmt.Sprintf("%d%% CPU", e.Need.CPU-e.MostFree.CPU))
	}
	if e.Need.MemoryMB > e.MostFree.MemoryMB {
		missing = append(missing, fmt.Sprintf("%d MB of memory", e.Need.MemoryMB-e.MostFree.MemoryMB))
	}
	if len(missing) > 0 {
		b.WriteString(" (missing " + strings.Join(missing, " and ") + ")")
	}
	return b.String()
}

func (e *UnfitError) Unwrap() error { return ErrUnfit }

// capacities tracks what each supervisor has free. A supervisor that
// declares no CPU (or no memory) capacity has no limit on it.
type capacities struct {
	declared map[string]Resources
	used     map[string]Resources
}

func newCapacities(sups []Supervisor) *capacities {
	c := &capacities{declared: map[string]Resources{}, used: map[string]Resources{}}
	for _, s := range sups {
		c.declared[s.ID] = s.Capacity
	}
	return c
}

// fits reports whether supervisor id has need free.
func (c *capacities) fits(id string, need Resources) bool {
	d, u := c.declared[id], c.used[id]
	cpuOK := d.CPU == 0 || u.CPU+need.CPU <= d.CPU
	memOK := d.MemoryMB == 0 || u.MemoryMB+need.MemoryMB <= d.MemoryMB
	return cpuOK && memOK
}

func (c *capacities) take(id string, r Resources)    { c.used[id] = c.used[id].Add(r) }
func (c *capacities) release(id string, r Resources) { c.used[id] = c.used[id].Sub(r) }

// free returns what supervisor id has free; a dimension without a limit
// reports the need it is asked about, as it always fits.
func (c *capacities) free(id string, need Resources) Resources {
	d, u := c.declared[id], c.used[id]
	f := d.Sub(u)
	if d.CPU == 0 {
		f.CPU = need.CPU
	}
	if d.MemoryMB == 0 {
		f.MemoryMB = need.MemoryMB
	}
	return f
}
