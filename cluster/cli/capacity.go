package cli

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/squallstream/squall/cluster/meta"
)

// capacityFlags are a supervisor's --cpu-capacity and --memory-capacity:
// what its workers may use together, which the scheduler never exceeds
// when it places topologies that declare resources.
type capacityFlags struct {
	cpu    int // percent of a core
	memory int // MB
}

func (c *capacityFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&c.cpu, "cpu-capacity", 100*runtime.NumCPU(),
		"CPU the workers may use together, in percent of a core (100 per core; default: 100 × the machine's cores; 0: no limit)")
	fs.IntVar(&c.memory, "memory-capacity", machineMemoryMB(),
		"memory the workers may use together, in MB (default: the machine's memory, from /proc/meminfo; 0: no limit)")
}

// resources returns the capacity the flags declare.
func (c *capacityFlags) resources() (meta.Resources, error) {
	if c.cpu < 0 || c.memory < 0 {
		return meta.Resources{}, fmt.Errorf("--cpu-capacity %d, --memory-capacity %d: want 0 (no limit) or more", c.cpu, c.memory)
	}
	return meta.Resources{CPU: c.cpu, MemoryMB: c.memory}, nil
}

// machineMemoryMB is the machine's memory in MB (MemTotal of
// /proc/meminfo), or 0, no limit, where it cannot be read.
func machineMemoryMB() int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseMemTotalMB(f)
}

// parseMemTotalMB reads the MemTotal line ("MemTotal:  16318480 kB") of
// /proc/meminfo's format; 0 if there is none.
func parseMemTotalMB(r interface{ Read([]byte) (int, error) }) int {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.Atoi(fields[1])
			if err != nil || kb < 0 {
				return 0
			}
			return kb / 1024
		}
	}
	return 0
}
