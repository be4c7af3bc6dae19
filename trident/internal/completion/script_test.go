package completion

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/squallstream/squall/txn"
)

// TestDataDriven runs every testdata/*.txt file with
// github.com/cockroachdb/datadriven: each case is an input directive, a
// ---- line and the lines it is expected to produce, up to a blank line.
// Lines starting with # are comments. -rewrite rewrites the expected
// output with the actual one. Handles are names chosen by the test file.
// Inputs:
//
//	config reports=N [early=N] [late=c1,c2] [committer]
//	                          a new machine
//	data T:A [early] [xN]     N (default 1) data tuples; prints whether the
//	                          shell processes them
//	report T:A FROM COUNT H   a report of component FROM, handle H
//	commit T:A H              the commit, handle H
//	fail T:A                  running an operation failed
//	finished T:A [error...]   the final step ran (failed with error)
//	success T                 txid T committed
//	status                    every recorded attempt and the number of
//	                          remembered txids
//
// Outputs are the actions, in order.
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
// parses words (1:0, x3) as well as key=value pairs.
func fields(args []datadriven.CmdArg) []string {
	f := make([]string, len(args))
	for i, a := range args {
		f[i] = a.String()
	}
	return f
}

// driver plays the shell for one test file.
type driver struct {
	m *Machine[string]
}

func (d *driver) run(cmd string, args []string) ([]string, error) {
	if d.m == nil && cmd != "config" {
		return nil, errors.New("the first input must be config")
	}
	var out []string
	switch cmd {
	case "config":
		cfg, err := parseConfig(args)
		if err != nil {
			return nil, err
		}
		m, err := New[string](cfg)
		if err != nil {
			return []string{"error: " + err.Error()}, nil
		}
		d.m = m
		return nil, nil
	case "status":
		return d.status(), nil
	case "success":
		if len(args) != 1 {
			return nil, errors.New("want success T")
		}
		t, err := strconv.ParseUint(args[0], 10, 64)
		if err != nil {
			return nil, err
		}
		d.m.Success(txn.TxID(t))
		return d.drain(), nil
	}
	if len(args) < 1 {
		return nil, errors.New("want an attempt T:A")
	}
	a, err := parseAttempt(args[0])
	if err != nil {
		return nil, err
	}
	args = args[1:]
	switch cmd {
	case "data":
		early, n := false, 1
		for _, x := range args {
			switch {
			case x == "early":
				early = true
			case strings.HasPrefix(x, "x"):
				if n, err = strconv.Atoi(x[1:]); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("unknown data argument %q", x)
			}
		}
		processed := 0
		for range n {
			if d.m.Data(a, early) {
				processed++
			}
		}
		out = append(out, fmt.Sprintf("processed %d of %d", processed, n))
	case "report":
		if len(args) != 3 {
			return nil, errors.New("want report T:A FROM COUNT H")
		}
		count, err := strconv.Atoi(args[1])
		if err != nil {
			return nil, err
		}
		d.m.Report(a, args[0], count, args[2])
	case "commit":
		if len(args) != 1 {
			return nil, errors.New("want commit T:A H")
		}
		d.m.Commit(a, args[0])
	case "fail":
		d.m.Fail(a, errors.New("injected"))
	case "finished":
		var err error
		if len(args) > 0 {
			err = errors.New(strings.Join(args, " "))
		}
		d.m.Finished(a, err)
	default:
		return nil, fmt.Errorf("unknown input %q", cmd)
	}
	return append(out, d.drain()...), nil
}

// drain collects the queued actions.
func (d *driver) drain() []string {
	var out []string
	for {
		a, ok := d.m.Next()
		if !ok {
			return out
		}
		out = append(out, a.String())
	}
}

func (d *driver) status() []string {
	var out []string
	for t := txn.TxID(1); t <= 64; t++ {
		if a, p := d.m.Status(t); p != 0 {
			out = append(out, a.String()+" "+p.String())
		}
	}
	return append(out, "remembered "+strconv.Itoa(d.m.Len()))
}

func parseConfig(args []string) (Config, error) {
	var cfg Config
	for _, kv := range args {
		if kv == "committer" {
			cfg.Committer = true
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return cfg, fmt.Errorf("want key=value, got %q", kv)
		}
		if k == "late" {
			cfg.Late = strings.Split(v, ",")
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return cfg, err
		}
		switch k {
		case "reports":
			cfg.Reports = n
		case "early":
			cfg.EarlyReports = n
		default:
			return cfg, fmt.Errorf("unknown config key %q", k)
		}
	}
	if cfg.Late == nil {
		cfg.EarlyReports = cfg.Reports // only early upstream stages unless late= says otherwise
	}
	return cfg, nil
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
