// Package proctest holds small helpers for tests that run programs as
// processes: a concurrency-safe output buffer and the tail of a log. The
// cluster's own process harness (nimbus, supervisors, workers against
// etcd) is cluster/clustertest.
package proctest

import (
	"bytes"
	"strings"
	"sync"
)

// Tail returns the last lines of s.
func Tail(s string, lines int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// Buffer is a bytes.Buffer safe for concurrent use: a process's output.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
