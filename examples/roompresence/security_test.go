package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/squallstream/squall/spouts/kafka"
)

var securityVars = []string{
	kafkaMechanismVar, kafkaUserVar, kafkaPasswordVar, kafkaTLSVar, kafkaCAVar, kafkaCertVar, kafkaKeyVar,
	kafkaServerVar, kafkaInsecureVar, cassUserVar, cassPasswordVar, cassTLSVar, cassCAVar, cassCertVar,
	cassKeyVar, cassServerVar, cassInsecureVar,
}

// clearSecurityEnv unsets every security variable for the test, then sets
// the given ones.
func clearSecurityEnv(t *testing.T, set map[string]string) {
	for _, v := range securityVars {
		t.Setenv(v, set[v])
	}
}

func parseOptions(t *testing.T, args ...string) (*options, error) {
	t.Helper()
	var o options
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.register(fs)
	return &o, o.parse(fs, append([]string{"--kafka", "broker:9094", "--cassandra", "db:9042"}, args...), false)
}

// TestSecurityFlagsReachConfigs: the security variables and flags (a flag
// wins over its variable) reach the spout's, the example's own Kafka and
// Cassandra configurations, and the chaos command's child processes.
func TestSecurityFlagsReachConfigs(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte(testCA), 0o600); err != nil {
		t.Fatal(err)
	}
	clearSecurityEnv(t, map[string]string{
		kafkaMechanismVar: "SCRAM-SHA-512", kafkaUserVar: "env-user", kafkaPasswordVar: "env-kafka-secret",
		kafkaCAVar: ca, cassUserVar: "cass-user", cassPasswordVar: "env-cass-secret", cassTLSVar: "true",
	})
	o, err := parseOptions(t, "--kafka-sasl-user", "flag-user", "--cassandra-tls-server-name", "db.example", "--cassandra-tls-ca", ca)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, o *options) {
		t.Helper()
		sc := runConfig{brokers: o.brokers(), kafkaSec: o.sec.kafka(), topic: o.topic, dlq: o.dlq}.spoutConfig(nil)
		if sc.SASL != (kafka.SASLConfig{Mechanism: "SCRAM-SHA-512", Username: "flag-user", Password: "env-kafka-secret"}) ||
			sc.TLS == nil || *sc.TLS != (kafka.TLSConfig{CAFile: ca}) {
			t.Fatalf("%s: spout SASL %#v TLS %+v", what, sc.SASL, sc.TLS)
		}
		if err := sc.Validate(); err != nil {
			t.Fatalf("%s: spout config: %v", what, err)
		}
		kio, err := newKafkaIO(o.brokers(), o.sec.kafka())
		if err != nil {
			t.Fatal(err)
		}
		defer kio.Close()
		if kio.transport.SASL == nil || kio.transport.SASL.Name() != "SCRAM-SHA-512" || kio.transport.TLS == nil || kio.transport.TLS.RootCAs == nil {
			t.Fatalf("%s: the example's own Kafka transport has SASL %v, TLS %v", what, kio.transport.SASL, kio.transport.TLS)
		}
		cc, err := o.cassandraConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cc.Username != "cass-user" || cc.Password != "env-cass-secret" || cc.TLS == nil ||
			cc.TLS.ServerName != "db.example" || cc.TLS.RootCAs == nil || cc.Keyspace != o.keyspace {
			t.Fatalf("%s: Cassandra config user %q TLS %+v", what, cc.Username, cc.TLS)
		}
	}
	check("flags and environment", o)

	// The chaos command's runs get the same settings through their
	// environment, with nothing on their command line.
	env := map[string]string{}
	for _, kv := range o.sec.env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	clearSecurityEnv(t, env)
	child, err := parseOptions(t)
	if err != nil {
		t.Fatal(err)
	}
	check("child environment", child)
}

// TestSecurityDefaultsOff: without variables or flags, Kafka and Cassandra
// are plaintext without credentials.
func TestSecurityDefaultsOff(t *testing.T) {
	clearSecurityEnv(t, nil)
	o, err := parseOptions(t)
	if err != nil {
		t.Fatal(err)
	}
	if sec := o.sec.kafka(); sec.sasl.Enabled() || sec.tls != nil {
		t.Fatalf("Kafka security %#v %+v, want none", sec.sasl, sec.tls)
	}
	if cc, err := o.cassandraConfig(); err != nil || cc.Username != "" || cc.TLS != nil {
		t.Fatalf("Cassandra config %+v, %v, want no credentials and no TLS", cc, err)
	}
}

// TestSecurityFlagErrors: bad settings fail the parse with a message
// naming the flag or variable, never the password.
func TestSecurityFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{kafkaTLSVar: "yes-please"}, nil, kafkaTLSVar},
		{nil, []string{"--kafka-sasl-mechanism", "SCRAM-SHA-256", "--kafka-sasl-user", "u"}, "--kafka-sasl"},
		{map[string]string{kafkaPasswordVar: "pw-secret"}, []string{"--kafka-sasl-mechanism", "KERBEROS", "--kafka-sasl-user", "u"}, "KERBEROS"},
		{map[string]string{cassPasswordVar: "pw-secret"}, nil, "--cassandra-user"},
		{nil, []string{"--cassandra-tls-ca", "/no/such/ca.pem"}, "--cassandra-tls"},
	} {
		clearSecurityEnv(t, tc.env)
		_, err := parseOptions(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("env %v args %v: %v, want an error naming %q without the password", tc.env, tc.args, err, tc.want)
		}
	}
}

// testCA is a self-signed certificate, only parsed, never trusted.
const testCA = `-----BEGIN CERTIFICATE-----
MIIBbzCCARWgAwIBAgIBATAKBggqhkjOPQQDAjAfMR0wGwYDVQQDExRyb29tcHJl
c2VuY2UtdGVzdC1jYTAeFw0yNjAxMDEwMDAwMDBaFw0zNjAxMDEwMDAwMDBaMB8x
HTAbBgNVBAMTFHJvb21wcmVzZW5jZS10ZXN0LWNhMFkwEwYHKoZIzj0CAQYIKoZI
zj0DAQcDQgAEzjVWzJz1XVvO3NgQ3JwAiEDtxO00HNW4JqXcsDjTRdrduEyFCoQ6
5q6gduhQk8g4K1APm7xjdf+l+OBkla1kpqNCMEAwDgYDVR0PAQH/BAQDAgIEMA8G
A1UdEwEB/wQFMAMBAf8wHQYDVR0OBBYEFFveMilALHhvVV5teIeFwlB68GIyMAoG
CCqGSM49BAMCA0gAMEUCIQDDSa9mGWRH6yFcox3JcRorMsO/KVcHyGVq3407GOoH
fQIgCLmpPYRoHzp79MQNg6hGgIFhunzNxrXpVHkgT2GHU3A=
-----END CERTIFICATE-----
`
