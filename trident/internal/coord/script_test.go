package coord

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/txn"
)

// TestDataDriven runs every testdata/*.txt file with
// github.com/cockroachdb/datadriven: each case is an input directive, a
// ---- line and the lines it is expected to produce, up to a blank line.
// Lines starting with # are comments. -rewrite rewrites the expected
// output with the actual one. Inputs:
//
//	config [max=N] [interval=N] [idle=N] [timeout=N] [attempts=N] [backoff=N] [maxbackoff=N] [seed=N]
//	                          new coordinator, zero state
//	restart [max=N] ...       new coordinator from the last persisted state
//	restarted [reason...]     Restarted (the predecessor crashed)
//	tick [N]                  N ticks (default 1)
//	elapse N                  Elapse(N): N ticks in one go
//	next                      NextTick: "tick N" or "no tick until an input"
//	nextemit                  NextEmit: "emit at tick N" or "window full"
//	ack batch|commit T:A      ack the processing or the commit of attempt T:A
//	fail batch|commit T:A [reason...]
//	                          a reason starting with "unavailable" is an
//	                          outage (failure.Unavailable)
//	ready true|false          SetSpoutReady
//	idle true|false           SetIdle
//	status                    the committed txid and every active txid
//
// Outputs are the actions, in order, and "halted: <error>" when the
// coordinator halts. The driver executes the actions like a shell would:
// it remembers the last persisted state for restart.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var dr driver
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := dr.run(d.Cmd, fields(d.CmdArgs))
			if err != nil {
				d.Fatalf(t, "%s: %v", d.FullCmd(), err)
			}
			return strings.Join(out, "\n")
		})
	})
}

// fields returns a directive's arguments as they were written: the driver
// parses words (1:0, unavailable:) as well as key=value pairs.
func fields(args []datadriven.CmdArg) []string {
	f := make([]string, len(args))
	for i, a := range args {
		f[i] = a.String()
	}
	return f
}

// driver plays the shell for one test file.
type driver struct {
	c         *Coordinator
	cfg       Config
	persisted State
	halted    bool
}

func (d *driver) run(cmd string, args []string) ([]string, error) {
	if d.c == nil && cmd != "config" {
		return nil, errors.New("the first input must be config")
	}
	switch cmd {
	case "config", "restart":
		cfg := d.cfg
		if cmd == "config" {
			cfg = Config{}
			d.persisted = State{}
		}
		if err := parseConfig(&cfg, args); err != nil {
			return nil, err
		}
		c, err := New(cfg, d.persisted)
		if err != nil {
			return []string{"error: " + err.Error()}, nil
		}
		d.c, d.cfg, d.halted = c, cfg, false
	case "tick":
		n := 1
		if len(args) > 0 {
			var err error
			if n, err = strconv.Atoi(args[0]); err != nil {
				return nil, err
			}
		}
		for range n {
			_ = d.c.Tick()
		}
	case "elapse":
		if len(args) != 1 {
			return nil, errors.New("want elapse N")
		}
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			return nil, err
		}
		_ = d.c.Elapse(n)
	case "next":
		n, ok := d.c.NextTick()
		if !ok {
			return []string{"no tick until an input"}, nil
		}
		return []string{"tick " + strconv.FormatInt(n, 10)}, nil
	case "nextemit":
		n, ok := d.c.NextEmit()
		if !ok {
			return []string{"window full"}, nil
		}
		return []string{"emit at tick " + strconv.FormatInt(n, 10)}, nil
	case "ack", "fail":
		if len(args) < 2 {
			return nil, errors.New("want batch|commit T:A")
		}
		p, err := parsePhase(args[0])
		if err != nil {
			return nil, err
		}
		a, err := parseAttempt(args[1])
		if err != nil {
			return nil, err
		}
		if cmd == "ack" {
			d.c.Ack(a, p)
			break
		}
		var reason error
		if len(args) > 2 {
			reason = errors.New(strings.Join(args[2:], " "))
		}
		_ = d.c.Fail(a, p, scriptReason(reason))
	case "restarted":
		var reason error = ErrRestarted
		if len(args) > 0 {
			reason = scriptReason(errors.New(strings.Join(args, " ")))
		}
		_ = d.c.Restarted(reason)
	case "idle":
		if len(args) != 1 {
			return nil, errors.New("want idle true|false")
		}
		b, err := strconv.ParseBool(args[0])
		if err != nil {
			return nil, err
		}
		d.c.SetIdle(b)
	case "ready":
		if len(args) != 1 {
			return nil, errors.New("want ready true|false")
		}
		b, err := strconv.ParseBool(args[0])
		if err != nil {
			return nil, err
		}
		d.c.SetSpoutReady(b)
	case "status":
		out := []string{"committed=" + d.c.Committed().String()}
		for t := d.c.Committed() + 1; ; t++ {
			a, s := d.c.Status(t)
			if s == 0 {
				break
			}
			out = append(out, a.String()+" "+s.String())
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown input %q", cmd)
	}
	return d.drain(), nil
}

// drain executes the queued actions the way a shell does.
func (d *driver) drain() []string {
	var out []string
	for _, a := range d.c.Ready() {
		if a.Kind == Persist {
			d.persisted = a.State
		}
		out = append(out, a.String())
	}
	d.c.Advance()
	if err := d.c.Err(); err != nil && !d.halted {
		d.halted = true
		out = append(out, "halted: "+err.Error())
	}
	return out
}

func parseConfig(cfg *Config, args []string) error {
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("want key=value, got %q", kv)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		switch k {
		case "max":
			cfg.MaxBatchesInFlight = n
		case "interval":
			cfg.EmitInterval = n
		case "idle":
			cfg.IdleInterval = n
		case "timeout":
			cfg.BatchTimeout = n
		case "attempts":
			cfg.MaxAttempts = n
		case "backoff":
			cfg.RetryBackoff = n
		case "maxbackoff":
			cfg.MaxRetryBackoff = n
		case "seed":
			cfg.Seed = uint64(n)
		default:
			return fmt.Errorf("unknown config key %q", k)
		}
	}
	return nil
}

// scriptReason marks a reason starting with "unavailable" as an outage.
func scriptReason(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "unavailable") {
		return failure.Unavailable(err)
	}
	return err
}

func parsePhase(s string) (Status, error) {
	switch s {
	case "batch":
		return Processing, nil
	case "commit":
		return Committing, nil
	}
	return 0, fmt.Errorf("want batch or commit, got %q", s)
}

func parseAttempt(s string) (txn.Attempt, error) {
	tx, n, ok := strings.Cut(s, ":")
	if !ok {
		return txn.Attempt{}, fmt.Errorf("want T:A, got %q", s)
	}
	t, err := strconv.ParseUint(tx, 10, 64)
	if err != nil {
		return txn.Attempt{}, err
	}
	a, err := strconv.ParseUint(n, 10, 32)
	if err != nil {
		return txn.Attempt{}, err
	}
	return txn.Attempt{TxID: txn.TxID(t), N: uint32(a)}, nil
}
