package supervisor

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// scriptNow is the clock reading of the scripts.
var scriptNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// TestCoreScripts runs testdata/core/*.txt with
// github.com/cockroachdb/datadriven against the supervisor's pure core
// (planAssignments, planReconcile, slotLife); slotsModel plays the shell.
// -rewrite rewrites the expected output. Inputs:
//
//	config id=ID ports=P,P [certs] [restart=D] [max-restart=D] [min-uptime=D]
//	assign T art=A [epoch=N] [slots=S:P,...] [sign=nimbus|none|client|tampered|stranger]
//	                        the assignment of topology T (sign needs certs;
//	                        default nimbus)
//	unassign T              removes T's assignment
//	garbage K               a record at K that does not decode
//	adopted P T A           a worker of T@A on port P left by an earlier run
//	reconcile               plans the assignments and the slots; prints the
//	                        refusals, the epochs of changed topologies and the
//	                        actions, and applies them
//	finish P                the oldest stopping run of port P ends
//	state                   the slots: adopted workers and runs
//	fail P MSG...           the latest run of P failed to start its worker
//	exit P code=N [uptime=D] [pid=N]
//	                        the latest run's worker exited
func TestCoreScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/core", func(t *testing.T, path string) {
		d := &coreDriver{t: t}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := d.run(td)
			if err != nil {
				td.Fatalf(t, "%s: %v", td.FullCmd(), err)
			}
			return out
		})
	})
}

// coreDriver holds one script's state.
type coreDriver struct {
	t         *testing.T
	id        string
	ports     []int
	restart   time.Duration
	maxWait   time.Duration
	minUptime time.Duration
	ca        *pki.Authority
	nimbus    *pki.Bundle
	client    *pki.Bundle
	stranger  *pki.Bundle // a nimbus of another cluster
	records   map[string][]byte
	epochs    map[string]int64
	m         *slotsModel
}

func (d *coreDriver) arg(td *datadriven.TestData, key, def string) string {
	if td.HasArg(key) {
		var v string
		td.ScanArgs(d.t, key, &v)
		return v
	}
	return def
}

func (d *coreDriver) duration(td *datadriven.TestData, key, def string) (time.Duration, error) {
	return time.ParseDuration(d.arg(td, key, def))
}

func (d *coreDriver) run(td *datadriven.TestData) (string, error) {
	if d.m == nil && td.Cmd != "config" {
		return "", errors.New("the first input must be config")
	}
	pos := func(i int) string {
		if i < len(td.CmdArgs) && len(td.CmdArgs[i].Vals) == 0 {
			return td.CmdArgs[i].Key
		}
		return ""
	}
	switch td.Cmd {
	case "config":
		return "", d.config(td)
	case "assign":
		return "", d.assign(td, pos(0))
	case "unassign":
		delete(d.records, "assignments/"+pos(0))
		return "", nil
	case "garbage":
		d.records[pos(0)] = []byte("{not json")
		return "", nil
	case "adopted":
		port, err := strconv.Atoi(pos(0))
		if err != nil {
			return "", err
		}
		d.m.adopted[port] = work{Topology: pos(1), Artifact: pos(2)}
		return "", nil
	case "reconcile":
		return d.reconcile()
	case "finish":
		port, err := strconv.Atoi(pos(0))
		if err != nil {
			return "", err
		}
		if !d.m.finish(port) {
			return "", fmt.Errorf("no run of port %d can end", port)
		}
		return "", nil
	case "state":
		return d.m.String(), nil
	case "fail", "exit":
		port, err := strconv.Atoi(pos(0))
		if err != nil {
			return "", err
		}
		r := d.m.latest(port)
		if r == nil || r.life == nil {
			return "", fmt.Errorf("no run started on port %d", port)
		}
		if td.Cmd == "fail" {
			var words []string
			for _, a := range td.CmdArgs[1:] {
				words = append(words, a.String())
			}
			return lines(r.life.startFailed(strings.Join(words, " "), scriptNow)), nil
		}
		return d.exit(td, r.life)
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

func (d *coreDriver) config(td *datadriven.TestData) error {
	var err error
	d.id = d.arg(td, "id", "s1")
	for _, p := range strings.Split(d.arg(td, "ports", "7000,7001"), ",") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return err
		}
		d.ports = append(d.ports, n)
	}
	if d.restart, err = d.duration(td, "restart", "1s"); err != nil {
		return err
	}
	if d.maxWait, err = d.duration(td, "max-restart", "30s"); err != nil {
		return err
	}
	if d.minUptime, err = d.duration(td, "min-uptime", "10s"); err != nil {
		return err
	}
	if td.HasArg("certs") {
		d.ca, d.nimbus, d.client, d.stranger = testPKI(d.t, scriptNow)
	}
	d.records, d.epochs, d.m = map[string][]byte{}, map[string]int64{}, newSlotsModel(nil)
	return nil
}

func (d *coreDriver) assign(td *datadriven.TestData, topology string) error {
	epoch, err := strconv.ParseInt(d.arg(td, "epoch", "1"), 10, 64)
	if err != nil {
		return err
	}
	a := meta.Assignment{Topology: topology, Artifact: d.arg(td, "art", "a1"), Status: meta.Active, Epoch: epoch}
	if s := d.arg(td, "slots", ""); s != "" {
		for _, key := range strings.Split(s, ",") {
			slot, err := meta.ParseSlotKey(strings.Replace(key, ":", "/", 1))
			if err != nil {
				return err
			}
			a.Workers = append(a.Workers, meta.Worker{Slot: slot})
		}
	}
	if d.ca != nil {
		if err := signAs(&a, d.arg(td, "sign", "nimbus"), d.nimbus, d.client, d.stranger); err != nil {
			return err
		}
	}
	d.records["assignments/"+topology] = []byte(meta.Encode(a))
	return nil
}

// signAs signs a as mode says: by a nimbus, by a client, by a nimbus of
// another cluster (stranger), signed then changed (tampered), or not.
func signAs(a *meta.Assignment, mode string, nimbus, client, stranger *pki.Bundle) error {
	switch mode {
	case "none":
		return nil
	case "nimbus":
		return a.Sign(nimbus)
	case "client":
		return a.Sign(client)
	case "stranger":
		return a.Sign(stranger)
	case "tampered":
		if err := a.Sign(nimbus); err != nil {
			return err
		}
		a.Artifact += "-evil"
		return nil
	}
	return fmt.Errorf("unknown sign mode %q", mode)
}

// testPKI makes, valid at now, a cluster CA with a nimbus and a client
// (serving at 127.0.0.1), and a nimbus of another cluster.
func testPKI(t testing.TB, now time.Time) (ca *pki.Authority, nimbus, client, stranger *pki.Bundle) {
	t.Helper()
	issue := func(a *pki.Authority, r pki.Role) *pki.Bundle {
		b, err := a.Issue(pki.Request{Role: r, Name: string(r), Hosts: []string{"127.0.0.1"}, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var err error
	if ca, err = pki.NewAuthority("cluster", 0, now); err != nil {
		t.Fatal(err)
	}
	other, err := pki.NewAuthority("other", 0, now)
	if err != nil {
		t.Fatal(err)
	}
	return ca, issue(ca, pki.Nimbus), issue(ca, pki.Client), issue(other, pki.Nimbus)
}

func (d *coreDriver) reconcile() (string, error) {
	var recs []assignmentRecord
	for _, k := range slices.Sorted(maps.Keys(d.records)) {
		recs = append(recs, assignmentRecord{Key: k, Value: d.records[k]})
	}
	tr := trust{Now: scriptNow}
	if d.ca != nil {
		tr.Roots = d.nimbus.Roots()
	}
	got := planAssignments(recs, d.id, d.ports, tr)
	var out []string
	for _, err := range got.Skipped {
		out = append(out, "skipped: "+err.Error())
	}
	for _, r := range got.Refused {
		why := "badly signed"
		if strings.Contains(r.Err.Error(), "not signed") {
			why = "not signed"
		}
		out = append(out, "refused "+r.Key+": "+why)
	}
	for _, topo := range slices.Sorted(maps.Keys(got.Epochs)) {
		if e := got.Epochs[topo]; d.epochs[topo] != e {
			out = append(out, fmt.Sprintf("epoch %s %d", topo, e))
		}
	}
	d.epochs = got.Epochs
	acts := planReconcile(d.m.view(), got.Desired)
	if err := d.m.apply(acts, func(port int, w work) *slotLife {
		return newSlotLife(meta.Slot{Supervisor: d.id, Port: port}, w, d.restart, d.maxWait, d.minUptime)
	}); err != nil {
		return "", err
	}
	for _, a := range acts {
		out = append(out, a.String())
	}
	return strings.Join(out, "\n"), nil
}

func (d *coreDriver) exit(td *datadriven.TestData, l *slotLife) (string, error) {
	code, err := strconv.Atoi(d.arg(td, "code", "1"))
	if err != nil {
		return "", err
	}
	pid, err := strconv.Atoi(d.arg(td, "pid", "100"))
	if err != nil {
		return "", err
	}
	uptime, err := d.duration(td, "uptime", "1m")
	if err != nil {
		return "", err
	}
	class, acts := l.exited(pid, code, scriptNow.Add(-uptime), scriptNow)
	return class.String() + "\n" + lines(acts), nil
}

func lines(acts []action) string {
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.String()
	}
	return strings.Join(out, "\n")
}
