package supervisor

import (
	"crypto/tls"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/httpguard"
)

// WorkerCertsDir is the directory, in a supervisor's data directory, of
// the certificates it issues to its workers: <port>/ holds the current
// one of the slot's worker (see issueWorker). It is out of the slots'
// directories, which belong to the workers when they run as another user.
const WorkerCertsDir = "worker-certs"

// trust is how the supervisor checks assignments now: against the
// cluster CA when it has certificates, not at all otherwise.
func (s *Supervisor) trust() trust {
	if s.cfg.Bundle == nil {
		return trust{}
	}
	return trust{Roots: s.cfg.Bundle.Roots(), Now: s.clock.Now()}
}

// Refused counts the assignments and code holders this supervisor
// refused: unsigned or badly signed assignments, holders without HTTPS.
func (s *Supervisor) Refused() int64 { return s.refused.Load() }

// issueWorker writes a fresh certificate for the worker of slot port, of
// topology in the epoch of its current assignment, and returns the
// directory holding it. The worker's name in it (pki.WorkerName) lets the
// workers of one topology and epoch, and only they, talk to each other.
//
// The directory, <DataDir>/worker-certs/<port>, is made afresh at each
// start, in a directory of the supervisor's own, so the worker cannot
// have left a link in its place: both are the supervisor's user's, mode
// 0700, or for a worker of another user (Isolation.RunAs) with the
// worker's group, mode 0710 and 0750, the key 0640: the worker can read
// its certificate but not change it.
func (s *Supervisor) issueWorker(topology string, port int) (string, error) {
	s.mu.Lock()
	epoch := s.epochs[topology]
	s.mu.Unlock()
	var hosts []string
	if h := s.cfg.WorkerHost; h != "" {
		hosts = append(hosts, h)
		if ip := net.ParseIP(h); ip == nil || ip.IsLoopback() {
			hosts = append(hosts, "localhost", "127.0.0.1", "::1")
		}
	}
	b, err := s.cfg.Bundle.IssueWorker(pki.WorkerName(topology, epoch), hosts, 0, s.clock.Now())
	if err != nil {
		return "", fmt.Errorf("supervisor: issuing a worker certificate: %w", err)
	}
	certs, err := s.freshCertsDir(port)
	if err != nil {
		return "", fmt.Errorf("supervisor: the worker's certificate directory: %w", err)
	}
	if err := pki.WriteBundle(certs, b); err != nil {
		return "", fmt.Errorf("supervisor: writing the worker's certificate: %w", err)
	}
	if r := s.cfg.Isolation.RunAs; r != nil {
		if err := shareFile(filepath.Join(certs, pki.KeyFile), int(r.GID), 0o640); err != nil {
			return "", fmt.Errorf("supervisor: giving the worker's key to its group: %w", err)
		}
	}
	return certs, nil
}

// freshCertsDir removes the certificate directory of slot port and makes
// it again, empty (see issueWorker).
func (s *Supervisor) freshCertsDir(port int) (string, error) {
	gid, perm, rootPerm := -1, fs.FileMode(0o700), fs.FileMode(0o700)
	if r := s.cfg.Isolation.RunAs; r != nil {
		gid, perm, rootPerm = int(r.GID), 0o750, 0o710
	}
	root := filepath.Join(s.cfg.DataDir, WorkerCertsDir)
	if err := supervisorDir(root, rootPerm, gid); err != nil {
		return "", err
	}
	dir := filepath.Join(root, strconv.Itoa(port))
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, perm); err != nil { // exclusive: a directory found here is not ours
		return "", err
	}
	return dir, supervisorDir(dir, perm, gid)
}

// shareFile gives the file at path (not followed if a link) to group gid
// with mode perm.
func shareFile(path string, gid int, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Chown(-1, gid); err != nil {
		return err
	}
	return f.Chmod(perm)
}

// logServer is the HTTP server of the workers' logs: every budget of
// httpguard, and TLS with the supervisor's certificate when it has one.
func (s *Supervisor) logServer() (*http.Server, error) {
	var tc *tls.Config
	if s.cfg.Bundle != nil {
		tc = s.cfg.Bundle.ServerTLS(false)
	}
	return httpguard.NewServer(s.logHandler(), httpguard.ServerConfig{TLS: tc, Logger: s.log})
}

// logURL is where the log server is reached.
func (s *Supervisor) logURL() string {
	if s.cfg.Bundle != nil {
		return "https://" + s.cfg.Listener.Addr().String()
	}
	return "http://" + s.cfg.Listener.Addr().String()
}
