// Command probe checks once whether a test service answers real requests:
// a Kafka metadata request that lists at least one broker, a CQL query on
// system.local, or a linearizable read on an etcd member (which needs its
// cluster to have a leader). scripts/services.sh runs it in a loop while Kafka and
// Cassandra start, so "ready" means "a client can use it", not "the port is
// open".
//
// Usage:
//
//	probe [-timeout 5s] kafka 127.0.0.1:19092
//	probe [-timeout 5s] cassandra 127.0.0.1:19042
//	probe [-timeout 5s] etcd 127.0.0.1:12379
//
// It exits 0 when the service answered, 1 when it did not, and 2 on bad
// arguments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/gocql/gocql"
	kafka "github.com/segmentio/kafka-go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func main() {
	timeout := flag.Duration("timeout", 5*time.Second, "give up on one attempt after this long")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: probe [-timeout 5s] kafka|cassandra|etcd HOST:PORT")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	kind, addr := flag.Arg(0), flag.Arg(1)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	var (
		info string
		err  error
	)
	switch kind {
	case "kafka":
		info, err = probeKafka(ctx, addr)
	case "cassandra":
		info, err = probeCassandra(ctx, addr, *timeout)
	case "etcd":
		info, err = probeEtcd(ctx, addr, *timeout)
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe %s %s: %v\n", kind, addr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %s: %s\n", kind, addr, info)
}

// probeKafka sends one metadata request and wants the broker to list itself.
func probeKafka(ctx context.Context, addr string) (string, error) {
	transport := &kafka.Transport{DialTimeout: 2 * time.Second, IdleTimeout: time.Second}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(addr), Transport: transport}
	resp, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}})
	if err != nil {
		return "", err
	}
	if len(resp.Brokers) == 0 {
		return "", errors.New("metadata lists no brokers yet")
	}
	return fmt.Sprintf("cluster %s, %d broker(s), controller %d", resp.ClusterID, len(resp.Brokers), resp.Controller.ID), nil
}

// probeCassandra opens a session and reads the node's release version.
func probeCassandra(ctx context.Context, addr string, timeout time.Duration) (info string, err error) {
	// gocql can panic on a half-initialised pool (for example with a
	// reconnection policy of zero retries); a probe reports, never crashes.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gocql panicked: %v", r)
		}
	}()
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", fmt.Errorf("bad port in %q", addr)
	}
	cluster := gocql.NewCluster(host)
	cluster.Port = port
	cluster.Timeout = timeout
	cluster.ConnectTimeout = timeout
	cluster.Consistency = gocql.One
	cluster.NumConns = 1
	cluster.DisableInitialHostLookup = true
	cluster.Logger = log.New(io.Discard, "", 0)
	session, err := cluster.CreateSession()
	if err != nil {
		return "", err
	}
	defer session.Close()
	var version string
	if err := session.Query("SELECT release_version FROM system.local").WithContext(ctx).Scan(&version); err != nil {
		return "", err
	}
	return "release " + version, nil
}

// probeEtcd asks the member for its status and makes one linearizable read
// through it, which succeeds only once its cluster has elected a leader.
func probeEtcd(ctx context.Context, addr string, timeout time.Duration) (string, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: timeout, Logger: zap.NewNop()})
	if err != nil {
		return "", err
	}
	defer cli.Close()
	st, err := cli.Status(ctx, addr)
	if err != nil {
		return "", err
	}
	if st.Leader == 0 {
		return "", errors.New("member has no leader yet")
	}
	if _, err := cli.Get(ctx, "squall-probe"); err != nil {
		return "", err
	}
	return fmt.Sprintf("etcd %s, member %x, leader %x, raft term %d", st.Version, st.Header.MemberId, st.Leader, st.RaftTerm), nil
}
