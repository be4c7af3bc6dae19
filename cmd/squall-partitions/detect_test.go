package main

import (
	"testing"
	"time"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/nemesis"
)

// TestClassifier: deletions of leased keys and changes of records are
// signals; a first value, a put of the value already stored and other
// keys are not.
func TestClassifier(t *testing.T) {
	k := meta.New("/squall")
	c := newClassifier(k)
	for _, ev := range []struct {
		del   bool
		key   string
		value string
		want  string // "" none
	}{
		{false, k.Supervisor("w1"), "a", ""},
		{false, k.Assignment(topologyName), "v1", ""}, // the first assignment
		{false, k.Assignment(topologyName), "v1", ""}, // rewritten unchanged
		{false, k.Status(topologyName), "c1", ""},
		{false, k.Status(topologyName), "c2", ""}, // commits are not reactions
		{false, k.Generation(topologyName), "1", ""},
		{true, k.Supervisor("w1"), "", sigSupervisorLease},
		{true, k.Worker(topologyName, meta.Slot{Supervisor: "w2", Port: 1}), "", sigWorkerLease},
		{true, k.Leader() + "/694d9a", "", sigLeaderLease},
		{false, k.Assignment(topologyName), "v2", sigReassigned},
		{false, k.Generation(topologyName), "2", sigNewOwner},
		{false, k.ErrorReport(topologyName, meta.Slot{Supervisor: "w1", Port: 1}), "e1", sigErrorReport},
		{false, k.ErrorReport(topologyName, meta.Slot{Supervisor: "w1", Port: 1}), "e1", ""},
		{false, k.Crash(topologyName, meta.Slot{Supervisor: "w1", Port: 1}), "1", sigCrash},
		{true, k.Status(topologyName), "", ""},
	} {
		got, ok := c.classify(ev.del, ev.key, []byte(ev.value))
		if ok != (ev.want != "") || got != ev.want {
			t.Errorf("%s %q=%q: signal %q (%v), want %q", map[bool]string{true: "delete", false: "put"}[ev.del], ev.key, ev.value, got, ok, ev.want)
		}
	}
}

// TestFirstSignalWhileFaultHolds: only signals between the fault and the
// heal count.
func TestFirstSignalWhileFaultHolds(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var s signals
	s.add(reaction{At: t0.Add(-time.Second), Name: sigCrash})
	s.add(reaction{At: t0.Add(4 * time.Second), Name: sigSupervisorLease})
	s.add(reaction{At: t0.Add(9 * time.Second), Name: sigReassigned})
	if r, ok := s.first(t0, t0.Add(10*time.Second)); !ok || r.Name != sigSupervisorLease {
		t.Errorf("first = %+v, %v", r, ok)
	}
	if r, ok := s.first(t0, t0.Add(3*time.Second)); ok {
		t.Errorf("a signal after the heal counted: %+v", r)
	}
}

func TestDetectionFiguresByKind(t *testing.T) {
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	rs := []result{{Episodes: []episodeResult{
		{Kinds: []nemesis.Kind{nemesis.Isolate}, Live: true, ToDetect: s(4), Signal: sigSupervisorLease},
		{Kinds: []nemesis.Kind{nemesis.Isolate}, Live: true, ToDetect: s(2), Signal: sigErrorReport},
		{Kinds: []nemesis.Kind{nemesis.Isolate}, Live: true, ToDetect: s(9), Signal: sigSupervisorLease},
		{Kinds: []nemesis.Kind{nemesis.Isolate}, Live: true},
	}}}
	f := figuresByKind(rs)[0]
	if f.Detected != 3 || f.Undetected != 1 || f.DetectMedian != s(4) || f.DetectMax != s(9) ||
		f.Signals[sigSupervisorLease] != 2 || f.Signals[sigErrorReport] != 1 {
		t.Errorf("isolate: %+v", f)
	}
	if got := signalCounts(f.Signals); got != "error-report×1 supervisor-lease×2" {
		t.Errorf("signal counts %q", got)
	}
}
