package supervisor

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path/filepath"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
	"github.com/squallstream/squall/internal/httpguard"
)

// WorkerCertsDir is the directory, in a slot's directory, of the
// certificate its supervisor issued to the slot's worker.
const WorkerCertsDir = "certs"

// checkSigned reports an assignment no nimbus of the cluster signed, when
// the supervisor has certificates.
func (s *Supervisor) checkSigned(a meta.Assignment) error {
	if s.cfg.Bundle == nil {
		return nil
	}
	_, err := a.Verify(s.cfg.Bundle.Roots(), s.clock.Now())
	return err
}

// Refused counts the assignments and code holders this supervisor
// refused: unsigned or badly signed assignments, holders without HTTPS.
func (s *Supervisor) Refused() int64 { return s.refused.Load() }

// issueWorker writes, in the slot directory dir, a fresh certificate for
// a worker of topology in the epoch of its current assignment, and
// returns the directory holding it. The worker's name in it
// (pki.WorkerName) lets the workers of one topology and epoch, and only
// they, talk to each other.
func (s *Supervisor) issueWorker(topology, dir string) (string, error) {
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
	certs := filepath.Join(dir, WorkerCertsDir)
	if err := pki.WriteBundle(certs, b); err != nil {
		return "", fmt.Errorf("supervisor: writing the worker's certificate: %w", err)
	}
	return certs, nil
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
