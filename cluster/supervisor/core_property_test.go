package supervisor

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/squallstream/squall/cluster/meta"
)

var (
	propPorts = []int{7000, 7001, 7002}
	propWorks = []work{{"t1", "a"}, {"t1", "b"}, {"t2", "a"}}
)

// drawDesired draws what the assignments give the slots.
func drawDesired(t *rapid.T, label string) map[int]work {
	d := map[int]work{}
	for _, p := range propPorts {
		if i := rapid.IntRange(-1, len(propWorks)-1).Draw(t, fmt.Sprintf("%s%d", label, p)); i >= 0 {
			d[p] = propWorks[i]
		}
	}
	return d
}

// TestReconcileProperties drives planReconcile through random changes of
// the assignments and runs ending, from random adopted workers, and checks
// after every reconcile: a slot never has two workers alive at once; a
// run or adopted worker of work the slot is no longer assigned is
// stopped; every assigned slot has one live run of its work; a run that
// ended on an unassigned slot is forgotten.
func TestReconcileProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newSlotsModel(drawDesired(t, "adopted"))
		desired := drawDesired(t, "desired")
		for step := range rapid.IntRange(1, 12).Draw(t, "steps") {
			switch rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("step%d", step)) {
			case 0:
				desired = drawDesired(t, fmt.Sprintf("desired%d-", step))
			case 1:
				m.finish(rapid.SampledFrom(propPorts).Draw(t, fmt.Sprintf("finish%d", step)))
				continue // a run ending is not a change of the assignments
			}
			before := m.view()
			acts := planReconcile(before, desired)
			if err := m.apply(acts, nil); err != nil {
				t.Fatalf("%v: %v", acts, err)
			}
			stopped := map[int]bool{}
			for _, a := range acts {
				if a.Kind == actStopRun || a.Kind == actStopAdopted {
					stopped[a.Port] = true
				}
			}
			for _, p := range propPorts {
				if n := m.workers(p); n > 1 {
					t.Fatalf("slot %d may run %d workers at once after %v:\n%s", p, n, acts, m)
				}
				w, assigned := desired[p]
				if r, ok := before.Runs[p]; ok && !r.Stopping && (!assigned || r.Work != w) && !stopped[p] {
					t.Fatalf("the run of %s on slot %d, assigned %v, was not stopped: %v", r.Work, p, w, acts)
				}
				if a, ok := before.Adopted[p]; ok && (!assigned || a != w) && !stopped[p] {
					t.Fatalf("the adopted worker of %s on slot %d, assigned %v, was not stopped: %v", a, p, w, acts)
				}
				if _, ok := m.adopted[p]; ok {
					t.Fatalf("an adopted worker of slot %d was neither taken over nor stopped: %v", p, acts)
				}
				last := m.latest(p)
				switch {
				case assigned && (last == nil || last.work != w || last.stopping):
					t.Fatalf("slot %d is assigned %s but its latest run is %+v after %v", p, w, last, acts)
				case !assigned && last != nil && !last.stopping:
					t.Fatalf("slot %d is unassigned but runs %s after %v", p, last.work, acts)
				case !assigned && before.Runs[p].Done && last != nil:
					t.Fatalf("the ended run of unassigned slot %d was not forgotten: %v", p, acts)
				}
			}
		}
	})
}

// TestSlotLifeProperties checks a slot's history against a model over
// random start failures and exits: waits stay within [RestartBackoff,
// max(RestartBackoff, MaxRestartBackoff)], a reassigned worker restarts
// after RestartBackoff, superseded and reassigned workers are not
// crashes, failures count start failures and early exits in a row.
func TestSlotLifeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := time.Duration(rapid.Int64Range(1, int64(2*time.Second)).Draw(t, "base"))
		maxWait := time.Duration(rapid.Int64Range(0, int64(time.Minute)).Draw(t, "max"))
		minUptime := time.Duration(rapid.Int64Range(0, int64(time.Minute)).Draw(t, "minUptime"))
		slot := meta.Slot{Supervisor: "s1", Port: 7000}
		l := newSlotLife(slot, work{"t1", "a"}, base, maxWait, minUptime)
		var failures, crashes int
		now := scriptNow
		for i := range rapid.IntRange(1, 40).Draw(t, "events") {
			var acts []action
			wantReport, reassigned := false, false
			if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("kind%d", i)) == 0 {
				failures++
				wantReport = true
				acts = l.startFailed("boom", now)
			} else {
				code := rapid.SampledFrom([]int{-1, 0, 1, 3, meta.ExitSuperseded, meta.ExitReassigned}).Draw(t, fmt.Sprintf("code%d", i))
				uptime := time.Duration(rapid.Int64Range(0, int64(2*time.Minute)).Draw(t, fmt.Sprintf("uptime%d", i)))
				var class exitClass
				class, acts = l.exited(100+i, code, now.Add(-uptime), now)
				switch code {
				case meta.ExitSuperseded:
					if class != exitSuperseded {
						t.Fatalf("code %d taken as %v", code, class)
					}
				case meta.ExitReassigned:
					reassigned = true
					if class != exitReassigned {
						t.Fatalf("code %d taken as %v", code, class)
					}
				default:
					if class != exitCrashed {
						t.Fatalf("code %d taken as %v", code, class)
					}
					wantReport = true
					crashes++
					if uptime < minUptime {
						failures++
					} else {
						failures = 0
					}
				}
			}
			var waits []time.Duration
			var reports []meta.Crash
			for _, a := range acts {
				switch a.Kind {
				case actBackOff:
					waits = append(waits, a.Wait)
				case actReport:
					reports = append(reports, a.Crash)
				default:
					t.Fatalf("a slot's history asked for %v", a)
				}
			}
			if len(waits) != 1 {
				t.Fatalf("%v: want one back-off", acts)
			}
			if w := waits[0]; w < base || w > max(base, maxWait) || reassigned && w != base {
				t.Fatalf("back-off %v outside [%v, %v] (reassigned %v)", w, base, max(base, maxWait), reassigned)
			}
			if wantReport != (len(reports) == 1) || len(reports) > 1 {
				t.Fatalf("%v: want a report: %v", acts, wantReport)
			}
			for _, c := range reports {
				if c.Failures != failures || c.Crashes != crashes || c.Slot != slot || c.Topology != "t1" || c.Artifact != "a" {
					t.Fatalf("report %+v, want failures %d crashes %d", c, failures, crashes)
				}
			}
			now = now.Add(time.Second)
		}
	})
}

// TestTrustProperties: with the cluster's roots, an assignment that a
// nimbus of the cluster did not sign as it is (unsigned, a client's, a
// nimbus's of another cluster, changed after signing) never yields a
// start nor an epoch, and every signed one that names the supervisor's
// slots does; without roots every assignment counts. Slots of other
// supervisors and ports the supervisor lacks never yield a start.
func TestTrustProperties(t *testing.T) {
	_, nimbus, client, stranger := testPKI(t, scriptNow)
	roots := nimbus.Roots()
	slots := []meta.Slot{{Supervisor: "s1", Port: 7000}, {Supervisor: "s1", Port: 7001}, {Supervisor: "s1", Port: 9999},
		{Supervisor: "s2", Port: 7000}}
	rapid.Check(t, func(t *rapid.T) {
		var recs []assignmentRecord
		trusted := map[string]meta.Assignment{}
		all := map[string]meta.Assignment{}
		for i := range rapid.IntRange(0, 4).Draw(t, "assignments") {
			a := meta.Assignment{Topology: fmt.Sprintf("t%d", i), Artifact: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "art"),
				Epoch: rapid.Int64Range(1, 5).Draw(t, "epoch")}
			for _, s := range slots {
				if rapid.Bool().Draw(t, "slot") {
					a.Workers = append(a.Workers, meta.Worker{Slot: s})
				}
			}
			mode := rapid.SampledFrom([]string{"nimbus", "none", "client", "stranger", "tampered"}).Draw(t, "sign")
			if err := signAs(&a, mode, nimbus, client, stranger); err != nil {
				t.Fatal(err)
			}
			if mode == "nimbus" {
				trusted[a.Topology] = a
			}
			all[a.Topology] = a
			recs = append(recs, assignmentRecord{Key: "assignments/" + a.Topology, Value: []byte(meta.Encode(a))})
		}
		ports := []int{7000, 7001}
		for _, c := range []struct {
			tr   trust
			want map[string]meta.Assignment
		}{{trust{Roots: roots, Now: scriptNow}, trusted}, {trust{}, all}} {
			got := planAssignments(recs, "s1", ports, c.tr)
			if len(got.Refused) != len(recs)-len(c.want) || len(got.Skipped) != 0 {
				t.Fatalf("%d refused, %d skipped of %d; want %d accepted", len(got.Refused), len(got.Skipped), len(recs), len(c.want))
			}
			if !slices.Equal(slices.Sorted(maps.Keys(got.Epochs)), slices.Sorted(maps.Keys(c.want))) {
				t.Fatalf("epochs of %v, want of %v", got.Epochs, slices.Sorted(maps.Keys(c.want)))
			}
			for _, a := range planReconcile(slotsView{}, got.Desired) {
				if a.Kind != actStartRun {
					t.Fatalf("from nothing: %v", a)
				}
				src, ok := c.want[a.Work.Topology]
				if !ok || src.Artifact != a.Work.Artifact || !src.Has(meta.Slot{Supervisor: "s1", Port: a.Port}) || !slices.Contains(ports, a.Port) {
					t.Fatalf("%v comes from no accepted assignment naming the slot", a)
				}
			}
			for _, a := range c.want {
				for _, w := range a.Workers {
					if got.Desired[w.Port].Topology == "" && w.Supervisor == "s1" && slices.Contains(ports, w.Port) {
						t.Fatalf("the accepted assignment of %s gives slot %d nothing", a.Topology, w.Port)
					}
				}
			}
		}
	})
}
