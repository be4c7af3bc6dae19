package supervisor

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// workerEnv is the environment a worker of topology starts with:
// Config.WorkerEnv, where the supervisor's own etcd identity is replaced
// by the topology's, if the leader gave it one (credentials/<topology>),
// and the supervisor's etcd client certificate by the worker's own
// (certs, its certificate directory; empty: none).
func (s *Supervisor) workerEnv(ctx context.Context, topology, certs string) ([]string, error) {
	env := slices.Clone(s.cfg.WorkerEnv)
	key := s.keys.Credentials(topology)
	resp, err := s.cfg.Client.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("supervisor: reading the workers' etcd credential of %s: %w", topology, err)
	}
	if len(resp.Kvs) > 0 {
		var c meta.WorkerCredential
		if err := meta.Decode(key, resp.Kvs[0].Value, &c); err != nil {
			return nil, err
		}
		env = setEnv(env, "SQUALL_ETCD_USER", c.User)
		env = setEnv(env, "SQUALL_ETCD_PASSWORD", c.Password)
		env = setEnv(env, "SQUALL_ETCD_PASSWORD_FILE", "")
	}
	if certs != "" && lookupEnv(env, "SQUALL_ETCD_CERT") != "" {
		env = setEnv(env, "SQUALL_ETCD_CERT", filepath.Join(certs, pki.CertFile))
		env = setEnv(env, "SQUALL_ETCD_KEY", filepath.Join(certs, pki.KeyFile))
	}
	return env, nil
}

// setEnv sets name to value in env (removing it when value is empty).
func setEnv(env []string, name, value string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	if value != "" {
		env = append(env, name+"="+value)
	}
	return env
}

func lookupEnv(env []string, name string) string {
	for _, kv := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// inheritable reports whether a variable of the supervisor's own
// environment may pass to its workers: not its secrets or identity
// (passwords, tokens, etcd user and client certificate, certificate
// directories), which a topology's code could read.
func inheritable(kv string) bool {
	name, _, _ := strings.Cut(kv, "=")
	if !strings.HasPrefix(name, "SQUALL_") {
		return true
	}
	for _, secret := range []string{"PASSWORD", "TOKEN", "ETCD_USER", "ETCD_CERT", "ETCD_KEY", "CERTS"} {
		if strings.Contains(name, secret) {
			return false
		}
	}
	return true
}
