// Command squall-etcd runs one etcd member (go.etcd.io/etcd/server/v3/embed,
// the version in squall's go.mod) in its own process. scripts/services.sh
// starts three of them on 127.0.0.1 as the real etcd cluster of the
// integration tests; without -initial-cluster it is a single-node etcd.
//
// Usage:
//
//	squall-etcd -data-dir DIR [-name NAME] [-client-url URL] [-peer-url URL]
//	            [-initial-cluster n1=URL,n2=URL,...] [-log-level warn]
//
// It prints "ready <endpoints>" on standard output once the member serves
// requests, logs etcd's messages of -log-level and above on standard error,
// and stops cleanly on SIGTERM or SIGINT (exit status 0).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/logutil"
	"go.uber.org/zap"

	"github.com/squallstream/squall/cluster/etcdembed"
)

func main() {
	var c etcdembed.Config
	flag.StringVar(&c.Dir, "data-dir", "", "data directory (required)")
	flag.StringVar(&c.Name, "name", etcdembed.DefaultName, "member name, unique in the cluster")
	flag.StringVar(&c.ClientURL, "client-url", "http://127.0.0.1:2379", "client URL to listen on and advertise")
	flag.StringVar(&c.PeerURL, "peer-url", "http://127.0.0.1:2380", "peer URL to listen on and advertise")
	flag.StringVar(&c.InitialCluster, "initial-cluster", "", "every member as name=peerURL,... (empty: a single-node cluster)")
	flag.StringVar(&c.ClusterToken, "cluster-token", "squall-etcd", "initial cluster token")
	flag.DurationVar(&c.ReadyTimeout, "ready-timeout", 2*time.Minute, "give up if not serving after this long")
	level := flag.String("log-level", "warn", "etcd log level: debug, info, warn, error")
	flag.Parse()
	if c.Dir == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	zc := logutil.DefaultZapLoggerConfig
	zc.Level = zap.NewAtomicLevelAt(logutil.ConvertToZapLevel(*level))
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
