package coord

import (
	"errors"
	"testing"

	"github.com/squallstream/squall/txn"
)

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg Config
		ok  bool
	}{
		{Config{}, true},
		{Config{MaxBatchesInFlight: maxWindow, EmitInterval: 5, BatchTimeout: 300, MaxAttempts: 10}, true},
		{Config{MaxBatchesInFlight: -1}, false},
		{Config{MaxBatchesInFlight: maxWindow + 1}, false},
		{Config{EmitInterval: -1}, false},
		{Config{BatchTimeout: -1}, false},
		{Config{MaxAttempts: -1}, false},
	} {
		err := c.cfg.Validate()
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
			t.Errorf("%+v: Validate = %v", c.cfg, err)
		}
		if _, err := New(c.cfg, State{}); (err == nil) != c.ok {
			t.Errorf("%+v: New = %v", c.cfg, err)
		}
	}
	if w := (Config{}).window(); w != 1 {
		t.Errorf("default window %d, want 1", w)
	}
}

func TestStrings(t *testing.T) {
	for got, want := range map[string]string{
		txn.Attempt{TxID: 3, N: 1}.String():                                                                                   "3:1",
		Action{Kind: EmitBatch, Attempt: txn.Attempt{TxID: 2}}.String():                                                       "emit 2:0",
		Action{Kind: Commit, Attempt: txn.Attempt{TxID: 2, N: 4}}.String():                                                    "commit 2:4",
		Action{Kind: Success, Attempt: txn.Attempt{TxID: 9}}.String():                                                         "success 9:0",
		Action{Kind: Persist, State: State{Committed: 2, Attempts: []txn.Attempt{{TxID: 3, N: 1}, {TxID: 4, N: 0}}}}.String(): "persist committed=2 attempts=[3:1 4:0]",
		Processing.String(): "processing",
		Processed.String():  "processed",
		Committing.String(): "committing",
		Status(0).String():  "inactive",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestAttemptLimitError(t *testing.T) {
	reason := errors.New("disk full")
	var err error = &AttemptLimitError{Last: txn.Attempt{TxID: 7, N: 4}, Failures: 3, Reason: reason}
	if !errors.Is(err, ErrAttemptLimit) || !errors.Is(err, reason) {
		t.Fatalf("%v does not match its sentinel and reason", err)
	}
	var ale *AttemptLimitError
	if !errors.As(err, &ale) || ale.Last.TxID != 7 {
		t.Fatalf("errors.As failed on %v", err)
	}
	want := "coord: batch 7 failed 3 times, giving up: last failure (attempt 7:4): disk full"
	if err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}

// TestReadyAdvance checks the raft-style hand-off: Ready repeats until
// Advance, and actions queued between Ready and Advance survive Advance.
func TestReadyAdvance(t *testing.T) {
	c, err := New(Config{MaxBatchesInFlight: 2}, State{})
	if err != nil {
		t.Fatal(err)
	}
	if c.HasReady() || len(c.Ready()) != 0 {
		t.Fatal("a new coordinator has actions before its first input")
	}
	c.Tick()
	first := c.Ready()
	if len(first) != 3 || len(c.Ready()) != 3 {
		t.Fatalf("Ready = %v, then %v", first, c.Ready())
	}
	c.Ack(txn.Attempt{TxID: 1}, Processing) // queues commit 1:0 after the handed-out three
	if got := c.Ready(); len(got) != 4 || got[3].String() != "commit 1:0" {
		t.Fatalf("Ready before Advance = %v", got)
	}
	c.Fail(txn.Attempt{TxID: 2}, Committing, nil) // the wrong phase: ignored
	c.Fail(txn.Attempt{TxID: 2}, Processing, nil)
	c.Advance()
	got := c.Ready()
	if len(got) != 2 || got[0].Kind != Persist || got[1].String() != "emit 2:1" {
		t.Fatalf("Ready after Advance = %v", got)
	}
	c.Advance()
	if c.HasReady() {
		t.Fatalf("actions left: %v", c.Ready())
	}
}
