// Command squall-etcd runs one etcd member (go.etcd.io/etcd/server/v3/embed,
// the version in squall's go.mod) in its own process. scripts/services.sh
// starts three of them on 127.0.0.1 as the real etcd cluster of the
// integration tests; without -initial-cluster it is a single-node etcd.
//
// Usage:
//
//	squall-etcd -data-dir DIR [-name NAME] [-client-url URL] [-peer-url URL]
//	            [-initial-cluster n1=URL,n2=URL,...] [-log-level warn]
//	            [-cert-file F -key-file F [-trusted-ca-file F] [-client-cert-auth]]
//	            [-peer-cert-file F -peer-key-file F [-peer-trusted-ca-file F] [-peer-client-cert-auth]]
//	            [-auth-token simple] [-bcrypt-cost 10]
//
// Without certificates the member serves plain HTTP (the default, for
// loopback). The TLS flags are etcd's own: -cert-file and -key-file serve
// clients over TLS (the default -client-url becomes
// https://127.0.0.1:2379), -trusted-ca-file refuses clients without a
// certificate its CA signed, and -client-cert-auth takes a client
// certificate's CommonName as its etcd user; the -peer-… flags do the
// same between members (the default -peer-url becomes
// https://127.0.0.1:2380). See "Securing etcd" in docs/cluster.md.
//
// It prints "ready <endpoints>" on standard output once the member serves
// requests, logs etcd's messages of -log-level and above on standard error,
// and stops cleanly on SIGTERM or SIGINT (exit status 0).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/logutil"
	"go.uber.org/zap"

	"github.com/squallstream/squall/cluster/etcdembed"
)

// Default URLs of the command (fixed ports, as etcd's own).
const (
	defaultClientURL = "http://127.0.0.1:2379"
	defaultPeerURL   = "http://127.0.0.1:2380"
)

// parse reads the command line into a member's Config (without its
// logger) and the log level.
func parse(args []string, stderr io.Writer) (etcdembed.Config, string, error) {
	var c etcdembed.Config
	fs := flag.NewFlagSet("squall-etcd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Dir, "data-dir", "", "data directory (required)")
	fs.StringVar(&c.Name, "name", etcdembed.DefaultName, "member name, unique in the cluster")
	fs.StringVar(&c.ClientURL, "client-url", defaultClientURL, "client URL to listen on and advertise (https:// by default with -cert-file)")
	fs.StringVar(&c.PeerURL, "peer-url", defaultPeerURL, "peer URL to listen on and advertise (https:// by default with -peer-cert-file)")
	fs.StringVar(&c.InitialCluster, "initial-cluster", "", "every member as name=peerURL,... (empty: a single-node cluster)")
	fs.StringVar(&c.ClusterToken, "cluster-token", "squall-etcd", "initial cluster token")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", 2*time.Minute, "give up if not serving after this long")
	fs.StringVar(&c.CertFile, "cert-file", "", "PEM certificate served to clients (TLS on the client URL)")
	fs.StringVar(&c.KeyFile, "key-file", "", "PEM key of -cert-file")
	fs.StringVar(&c.TrustedCAFile, "trusted-ca-file", "", "PEM CA of the client certificates: clients without one it signed are refused")
	fs.BoolVar(&c.ClientCertAuth, "client-cert-auth", false, "take a client certificate's CommonName as its etcd user (needs -trusted-ca-file)")
	fs.StringVar(&c.PeerCertFile, "peer-cert-file", "", "PEM certificate towards the other members, as server and client (TLS on the peer URL)")
	fs.StringVar(&c.PeerKeyFile, "peer-key-file", "", "PEM key of -peer-cert-file")
	fs.StringVar(&c.PeerTrustedCAFile, "peer-trusted-ca-file", "", "PEM CA of the members' certificates: peers without one it signed are refused")
	fs.BoolVar(&c.PeerClientCertAuth, "peer-client-cert-auth", false, "refuse peers without a certificate (needs -peer-trusted-ca-file)")
	fs.StringVar(&c.AuthToken, "auth-token", "simple", "etcd's token type once authentication is enabled: simple, or jwt,pub-key=...,priv-key=...,sign-method=...")
	fs.IntVar(&c.BcryptCost, "bcrypt-cost", etcdembed.DefaultBcryptCost, "bcrypt cost of etcd users' password hashes (4 to 31)")
	level := fs.String("log-level", "warn", "etcd log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return c, "", err
	}
	if c.Dir == "" || fs.NArg() != 0 {
		fs.Usage()
		return c, "", errors.New("-data-dir is required, and there are no arguments")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.CertFile != "" && !set["client-url"] {
		c.ClientURL = "https" + strings.TrimPrefix(defaultClientURL, "http")
	}
	if c.PeerCertFile != "" && !set["peer-url"] {
		c.PeerURL = "https" + strings.TrimPrefix(defaultPeerURL, "http")
	}
	if err := c.Validate(); err != nil {
		return c, "", err
	}
	return c, *level, nil
}

func main() {
	c, level, err := parse(os.Args[1:], os.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "squall-etcd:", err)
		}
		os.Exit(2)
	}
	zc := logutil.DefaultZapLoggerConfig
	zc.Level = zap.NewAtomicLevelAt(logutil.ConvertToZapLevel(level))
	lg, err := zc.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "squall-etcd:", err)
		os.Exit(2)
	}
	c.Logger = lg

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s, err := etcdembed.Start(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "squall-etcd:", err)
		os.Exit(1)
	}
	fmt.Printf("ready %s\n", strings.Join(s.Endpoints(), ","))
	select {
	case <-ctx.Done():
		s.Close()
	case err := <-s.Err():
		s.Close()
		fmt.Fprintln(os.Stderr, "squall-etcd: member failed:", err)
		os.Exit(1)
	}
}
