package acker

import "testing"

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{RootID(0).String(), "0000000000000000"},
		{RootID(0xdeadbeef).String(), "00000000deadbeef"},
		{RootID(1<<64 - 1).String(), "ffffffffffffffff"},
		{TaskID(7).String(), "7"},
		{NoTask.String(), "none"},
		{Pending.String(), "pending"},
		{Completed.String(), "completed"},
		{Failed.String(), "failed"},
		{TimedOut.String(), "timed out"},
		{Status(9).String(), "status(9)"},
		{Outcome{Root: 0xab, SpoutTask: 3, Status: Completed}.String(), "root 00000000000000ab completed (spout task 3)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestStatusDone(t *testing.T) {
	for s, want := range map[Status]bool{Pending: false, Completed: true, Failed: true, TimedOut: true} {
		if s.Done() != want {
			t.Errorf("%v.Done() = %v, want %v", s, s.Done(), want)
		}
	}
}
