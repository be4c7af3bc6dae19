// Package testenv connects integration tests to the real Kafka, Cassandra
// and etcd cluster that scripts/services.sh runs on 127.0.0.1.
//
// The script's `env` command prints the variables this package reads:
//
//	SQUALL_KAFKA_BROKERS=127.0.0.1:19092
//	SQUALL_CASSANDRA_HOSTS=127.0.0.1:19042
//	SQUALL_ETCD_ENDPOINTS=127.0.0.1:12379,127.0.0.1:12479,127.0.0.1:12579
//
// Each holds one address or a comma-separated list. `make test` sets them. A
// test that needs a service asks for it first thing:
//
//	brokers := testenv.KafkaBrokers(t)
//
// When the variable is missing the test is skipped, so `go test ./...` works
// on a machine without Java; under CI (the CI variable set to a true value
// such as "true" or "1") it fails instead, so a CI run can never pass by
// skipping the integration tests. Either way the message says how to start
// the services.
//
// UniqueName gives each test its own topic or keyspace, so tests never share
// state through a long-running service, even across runs.
//
// StopService, StartService and RestartService stop and start one service
// through scripts/services.sh for fault-injection tests; its data survives.
// They run only where SQUALL_SERVICES_EXCLUSIVE is set (make test and make
// test-integration run the integration packages one at a time and set it),
// so a stopped service never breaks another package's tests.
package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Variables read by KafkaBrokers and CassandraHosts.
const (
	KafkaBrokersVar   = "SQUALL_KAFKA_BROKERS"
	CassandraHostsVar = "SQUALL_CASSANDRA_HOSTS"
	EtcdEndpointsVar  = "SQUALL_ETCD_ENDPOINTS"
)

// KafkaBrokers returns the Kafka bootstrap addresses (host:port) from
// SQUALL_KAFKA_BROKERS. If the variable is unset or empty it skips the test,
// or fails it under CI.
func KafkaBrokers(t testing.TB) []string {
	t.Helper()
	return require(t, "Kafka", KafkaBrokersVar)
}

// CassandraHosts returns the Cassandra contact points (host:port) from
// SQUALL_CASSANDRA_HOSTS. If the variable is unset or empty it skips the
// test, or fails it under CI.
//
// With gocql, pass the addresses as they are (gocql.NewCluster(hosts...));
// gocql keeps the port of each contact point.
func CassandraHosts(t testing.TB) []string {
	t.Helper()
	return require(t, "Cassandra", CassandraHostsVar)
}

// EtcdEndpoints returns the client addresses (host:port) of the three
// members of the real etcd cluster from SQUALL_ETCD_ENDPOINTS, ready for
// clientv3.Config.Endpoints. If the variable is unset or empty it skips the
// test, or fails it under CI.
func EtcdEndpoints(t testing.TB) []string {
	t.Helper()
	return require(t, "etcd cluster", EtcdEndpointsVar)
}

func require(t testing.TB, service, name string) []string {
	t.Helper()
	addrs, msg := lookup(os.Getenv, service, name)
	if msg != "" {
		skipOrFail(t, msg)
	}
	return addrs
}

// skipOrFail skips the test for want of a service, or fails it under CI.
func skipOrFail(t testing.TB, msg string) {
	t.Helper()
	if InCI() {
		t.Fatal(msg + " (CI is set, so this fails the test instead of skipping it)")
	}
	t.Skip(msg)
}

// lookup parses the variable name; msg is non-empty when it is unusable.
func lookup(getenv func(string) string, service, name string) (addrs []string, msg string) {
	raw := getenv(name)
	for _, a := range strings.Split(raw, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) > 0 {
		return addrs, ""
	}
	return nil, fmt.Sprintf("%s is not set: this test needs a real %s; start it with `scripts/services.sh up` "+
		"and export its addresses with `eval \"$(scripts/services.sh env)\"` (or run `make test`)", name, service)
}

// InCI reports whether the CI variable holds a true value ("true", "1", ...).
func InCI() bool {
	ci, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && ci
}

// UniqueName returns a name no other test or run uses, valid both as a Kafka
// topic and as a Cassandra keyspace or table: prefix, then the test's name
// folded to [a-z0-9_], then 8 random hex digits; at most 48 characters
// (Cassandra's limit).
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("testenv: random name: %v", err)
	}
	return uniqueName(prefix, t.Name(), hex.EncodeToString(b[:]))
}

func uniqueName(prefix, testName, suffix string) string {
	const maxLen = 48
	fold := func(s string) string {
		var sb strings.Builder
		for _, r := range strings.ToLower(s) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				sb.WriteRune(r)
			default:
				sb.WriteByte('_')
			}
		}
		return sb.String()
	}
	head := fold(prefix)
	if head == "" || head[0] < 'a' || head[0] > 'z' {
		head = "t" + head // keyspace names must start with a letter
	}
	middle := fold(testName)
	room := maxLen - len(head) - len(suffix) - 2
	if room < 0 {
		head = head[:maxLen-len(suffix)-1]
		return head + "_" + suffix
	}
	if len(middle) > room {
		middle = middle[:room]
	}
	return head + "_" + middle + "_" + suffix
}
