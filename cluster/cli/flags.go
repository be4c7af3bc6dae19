package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/squallstream/squall/internal/httpguard"
	"github.com/squallstream/squall/internal/logfile"
)

// envName is the environment variable of a flag: SQUALL_<FLAG>, the flag's
// name upper-cased with dashes as underscores. A command-specific variable
// SQUALL_<COMMAND>_<FLAG> wins over it (SQUALL_SUPERVISOR_ID vs
// SQUALL_NIMBUS_ID).
func envName(command, flagName string) (specific, general string) {
	up := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
	return "SQUALL_" + up(command) + "_" + up(flagName), "SQUALL_" + up(flagName)
}

// applyEnv sets every flag not given on the command line from its
// environment variable, if set.
func applyEnv(fs *flag.FlagSet, command string, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		specific, general := envName(command, f.Name)
		for _, name := range []string{specific, general} {
			if v := getenv(name); v != "" {
				if err := fs.Set(f.Name, v); err != nil {
					errs = append(errs, fmt.Errorf("environment variable %s=%q for --%s: %w", name, v, f.Name, err))
				}
				return
			}
		}
	})
	return errors.Join(errs...)
}

// etcdFlags are the flags of every command that reaches etcd.
type etcdFlags struct {
	endpoints      string
	ca, cert, key  string
	user, password string
	passwordFile   string
	prefix         string
	dialTimeout    time.Duration
}

func (e *etcdFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.endpoints, "etcd-endpoints", "127.0.0.1:2379", "etcd client endpoints, comma-separated (https://host:port with TLS)")
	fs.StringVar(&e.ca, "etcd-ca", "", "PEM file of the CA that signed etcd's server certificates (enables TLS)")
	fs.StringVar(&e.cert, "etcd-cert", "", "PEM client certificate for etcd (with --etcd-key)")
	fs.StringVar(&e.key, "etcd-key", "", "PEM private key of --etcd-cert")
	fs.StringVar(&e.user, "etcd-user", "", "etcd user name (with --etcd-password)")
	fs.StringVar(&e.password, "etcd-password", "", "etcd password: from the environment variable SQUALL_ETCD_PASSWORD only (a command line is visible to every user of the host)")
	fs.StringVar(&e.passwordFile, "etcd-password-file", "", "file holding the etcd password (instead of SQUALL_ETCD_PASSWORD)")
	fs.StringVar(&e.prefix, "prefix", "/squall", "prefix of the cluster's keys in etcd")
	fs.DurationVar(&e.dialTimeout, "etcd-dial-timeout", 5*time.Second, "bound of the first connection to etcd")
}

func (e *etcdFlags) validate() error {
	eps := e.endpointList()
	switch {
	case len(eps) == 0:
		return errors.New("--etcd-endpoints is empty")
	case (e.cert == "") != (e.key == ""):
		return errors.New("--etcd-cert and --etcd-key go together")
	case e.password != "" && e.passwordFile != "":
		return errors.New("--etcd-password-file and SQUALL_ETCD_PASSWORD: give one")
	case (e.user == "") != (e.password == "" && e.passwordFile == ""):
		return errors.New("--etcd-user and --etcd-password go together")
	case !strings.HasPrefix(e.prefix, "/") || strings.HasSuffix(e.prefix, "/") && e.prefix != "/":
		return fmt.Errorf("--prefix %q: want a key prefix like /squall", e.prefix)
	}
	return nil
}

func (e *etcdFlags) endpointList() []string { return splitList(e.endpoints) }

// client connects to etcd.
func (e *etcdFlags) client() (*clientv3.Client, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	if e.passwordFile != "" {
		pw, err := readSecretFile("--etcd-password-file", e.passwordFile)
		if err != nil {
			return nil, err
		}
		e.password, e.passwordFile = pw, ""
	}
	cfg := clientv3.Config{Endpoints: e.endpointList(), DialTimeout: e.dialTimeout, Username: e.user, Password: e.password,
		Logger: zap.NewNop()}
	if e.ca != "" || e.cert != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if e.ca != "" {
			pem, err := os.ReadFile(e.ca)
			if err != nil {
				return nil, fmt.Errorf("--etcd-ca: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--etcd-ca %s: no PEM certificate in it", e.ca)
			}
		}
		if e.cert != "" {
			c, err := tls.LoadX509KeyPair(e.cert, e.key)
			if err != nil {
				return nil, fmt.Errorf("--etcd-cert/--etcd-key: %w", err)
			}
			tc.Certificates = []tls.Certificate{c}
		}
		cfg.TLS = tc
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd at %s: %w", e.endpoints, err)
	}
	return cli, nil
}

// env is the environment that hands these settings to a worker process.
func (e *etcdFlags) env() []string {
	out := []string{"SQUALL_ETCD_ENDPOINTS=" + e.endpoints, "SQUALL_PREFIX=" + e.prefix,
		"SQUALL_ETCD_DIAL_TIMEOUT=" + e.dialTimeout.String()}
	for name, v := range map[string]string{"SQUALL_ETCD_CA": e.ca, "SQUALL_ETCD_CERT": e.cert, "SQUALL_ETCD_KEY": e.key,
		"SQUALL_ETCD_USER": e.user, "SQUALL_ETCD_PASSWORD": e.password, "SQUALL_ETCD_PASSWORD_FILE": e.passwordFile} {
		if v != "" {
			out = append(out, name+"="+v)
		}
	}
	return out
}

// logFlags configure the process's log.
type logFlags struct {
	level, format string
	file          logfile.Config
}

func (l *logFlags) register(fs *flag.FlagSet, level string) {
	fs.StringVar(&l.level, "log-level", level, "log level: debug, info, warn or error")
	fs.StringVar(&l.format, "log-format", "text", "log format: text or json")
	fs.StringVar(&l.file.Path, "log-file", "", "write the log to this file, rotated by size, instead of standard error")
	fs.Int64Var(&l.file.MaxBytes, "log-max-bytes", logfile.DefaultMaxBytes, "with --log-file: the size past which the file is rotated")
	fs.IntVar(&l.file.MaxFiles, "log-files", logfile.DefaultMaxFiles, "with --log-file: the files kept, the one written included")
}

// logger returns the logger the flags ask for, writing to w unless
// --log-file names a file, and what to close when done with it.
func (l *logFlags) logger(w io.Writer) (*slog.Logger, io.Closer, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(l.level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", l.level)
	}
	if l.format != "text" && l.format != "json" {
		return nil, nil, fmt.Errorf("--log-format %q: want text or json", l.format)
	}
	closer := io.Closer(nopCloser{})
	if l.file.Path != "" {
		f, err := logfile.Open(l.file)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w, closer = f, f
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: logfile.ReadableDurations}
	if l.format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), closer, nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), closer, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// loopback reports whether every etcd endpoint is on loopback.
func (e *etcdFlags) loopback() bool {
	for _, ep := range e.endpointList() {
		if i := strings.Index(ep, "://"); i >= 0 {
			ep = ep[i+3:]
		}
		if !httpguard.LoopbackAddr(ep) && !httpguard.LoopbackHost(ep) {
			return false
		}
	}
	return true
}

// secretFlags may not be given on the command line, where every user of
// the host can read them (ps): only from the environment or a file.
var secretFlags = map[string]string{
	"etcd-password": "set SQUALL_ETCD_PASSWORD in the environment or use --etcd-password-file",
}

// refuseSecrets reports a secret given on the command line.
func refuseSecrets(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if hint, ok := secretFlags[f.Name]; ok && err == nil {
			err = fmt.Errorf("--%s on the command line is visible to every user of this host: %s", f.Name, hint)
		}
	})
	return err
}

// readSecretFile reads a secret (a token, a password) from a file: its
// first line, without surrounding space. An empty name is no secret.
func readSecretFile(flagName, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flagName, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", fmt.Errorf("%s %s: the file is empty", flagName, name)
	}
	return line, nil
}

// reach checks, within the dial timeout, that one of the endpoints
// answers, so that a wrong endpoint fails at once and names what was
// tried rather than after the command's whole timeout.
func (e *etcdFlags) reach(ctx context.Context, cli *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(ctx, e.dialTimeout)
	defer cancel()
	var errs []error
	for _, ep := range e.endpointList() {
		if _, err := cli.Status(ctx, ep); err == nil {
			return nil
		} else {
			errs = append(errs, fmt.Errorf("%s: %w", ep, err))
		}
	}
	return fmt.Errorf("no etcd endpoint answered within --etcd-dial-timeout %v (tried %s): %w", e.dialTimeout,
		strings.Join(e.endpointList(), ", "), errors.Join(errs...))
}
