package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/squallstream/squall/spouts/kafka"
)

// Environment variables of the security flags. Each flag defaults to its
// variable; passwords are best given this way, since a command line is
// visible to every user of the machine.
const (
	kafkaMechanismVar  = "SQUALL_KAFKA_SASL_MECHANISM"
	kafkaUserVar       = "SQUALL_KAFKA_SASL_USERNAME"
	kafkaPasswordVar   = "SQUALL_KAFKA_SASL_PASSWORD"
	kafkaTLSVar        = "SQUALL_KAFKA_TLS"
	kafkaCAVar         = "SQUALL_KAFKA_TLS_CA_FILE"
	kafkaCertVar       = "SQUALL_KAFKA_TLS_CERT_FILE"
	kafkaKeyVar        = "SQUALL_KAFKA_TLS_KEY_FILE"
	kafkaServerVar     = "SQUALL_KAFKA_TLS_SERVER_NAME"
	kafkaInsecureVar   = "SQUALL_KAFKA_TLS_INSECURE"
	cassUserVar        = "SQUALL_CASSANDRA_USERNAME"
	cassPasswordVar    = "SQUALL_CASSANDRA_PASSWORD"
	cassTLSVar         = "SQUALL_CASSANDRA_TLS"
	cassCAVar          = "SQUALL_CASSANDRA_TLS_CA_FILE"
	cassCertVar        = "SQUALL_CASSANDRA_TLS_CERT_FILE"
	cassKeyVar         = "SQUALL_CASSANDRA_TLS_KEY_FILE"
	cassServerVar      = "SQUALL_CASSANDRA_TLS_SERVER_NAME"
	cassInsecureVar    = "SQUALL_CASSANDRA_TLS_INSECURE"
	passwordFlagWarned = "(prefer the environment variable: a command line is visible to other users)"
)

// kafkaSec is how the example connects to a real Kafka: SASL and TLS,
// for the spout and for its own reads and writes.
type kafkaSec struct {
	sasl kafka.SASLConfig
	tls  *kafka.TLSConfig
}

// tlsFlags are the TLS settings of one service.
type tlsFlags struct {
	on                                bool
	ca, cert, key, serverName         string
	insecure                          bool
	onVar, caVar, certVar, keyVar     string
	serverVar, insecureVar, flagScope string
}

func (t *tlsFlags) register(fs *flag.FlagSet, service string, errs *[]error) {
	p := "--" + t.flagScope
	fs.BoolVar(&t.on, t.flagScope+"-tls", envBool(t.onVar, errs), "connect to "+service+" with TLS (default $"+t.onVar+"; implied by the other "+p+"-tls-* flags)")
	fs.StringVar(&t.ca, t.flagScope+"-tls-ca", os.Getenv(t.caVar), "PEM file of the authorities that sign "+service+"'s certificates (default $"+t.caVar+"; empty: the system's)")
	fs.StringVar(&t.cert, t.flagScope+"-tls-cert", os.Getenv(t.certVar), "PEM client certificate for "+service+" (default $"+t.certVar+")")
	fs.StringVar(&t.key, t.flagScope+"-tls-key", os.Getenv(t.keyVar), "PEM key of the client certificate (default $"+t.keyVar+")")
	fs.StringVar(&t.serverName, t.flagScope+"-tls-server-name", os.Getenv(t.serverVar), "name "+service+"'s certificates must carry (default $"+t.serverVar+"; empty: the host)")
	fs.BoolVar(&t.insecure, t.flagScope+"-tls-insecure", envBool(t.insecureVar, errs), "do not verify "+service+"'s certificates: tests only (default $"+t.insecureVar+")")
}

// config is the TLS configuration, nil when TLS is off.
func (t *tlsFlags) config() *kafka.TLSConfig {
	if !t.on && t.ca == "" && t.cert == "" && t.key == "" && t.serverName == "" && !t.insecure {
		return nil
	}
	return &kafka.TLSConfig{CAFile: t.ca, CertFile: t.cert, KeyFile: t.key, ServerName: t.serverName, InsecureSkipVerify: t.insecure}
}

// env lists the settings as environment variables, for child processes.
func (t *tlsFlags) env() []string {
	return []string{
		t.onVar + "=" + strconv.FormatBool(t.on), t.caVar + "=" + t.ca, t.certVar + "=" + t.cert,
		t.keyVar + "=" + t.key, t.serverVar + "=" + t.serverName, t.insecureVar + "=" + strconv.FormatBool(t.insecure),
	}
}

// security are the flags of credentials and TLS for Kafka and Cassandra.
type security struct {
	kafkaMechanism, kafkaUser, kafkaPassword string
	kafkaTLS                                 tlsFlags
	cassUser, cassPassword                   string
	cassTLS                                  tlsFlags
	envErrs                                  []error // unparsable boolean variables
}

func (s *security) register(fs *flag.FlagSet) {
	fs.StringVar(&s.kafkaMechanism, "kafka-sasl-mechanism", os.Getenv(kafkaMechanismVar), "Kafka SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (default $"+kafkaMechanismVar+"; empty: no SASL)")
	fs.StringVar(&s.kafkaUser, "kafka-sasl-user", os.Getenv(kafkaUserVar), "Kafka SASL user (default $"+kafkaUserVar+")")
	fs.StringVar(&s.kafkaPassword, "kafka-sasl-password", os.Getenv(kafkaPasswordVar), "Kafka SASL password (default $"+kafkaPasswordVar+") "+passwordFlagWarned)
	s.kafkaTLS = tlsFlags{onVar: kafkaTLSVar, caVar: kafkaCAVar, certVar: kafkaCertVar, keyVar: kafkaKeyVar,
		serverVar: kafkaServerVar, insecureVar: kafkaInsecureVar, flagScope: "kafka"}
	s.kafkaTLS.register(fs, "Kafka", &s.envErrs)
	fs.StringVar(&s.cassUser, "cassandra-user", os.Getenv(cassUserVar), "Cassandra user (PasswordAuthenticator; default $"+cassUserVar+")")
	fs.StringVar(&s.cassPassword, "cassandra-password", os.Getenv(cassPasswordVar), "Cassandra password (default $"+cassPasswordVar+") "+passwordFlagWarned)
	s.cassTLS = tlsFlags{onVar: cassTLSVar, caVar: cassCAVar, certVar: cassCertVar, keyVar: cassKeyVar,
		serverVar: cassServerVar, insecureVar: cassInsecureVar, flagScope: "cassandra"}
	s.cassTLS.register(fs, "Cassandra", &s.envErrs)
}

// kafka is the Kafka security the flags describe.
func (s *security) kafka() kafkaSec {
	return kafkaSec{
		sasl: kafka.SASLConfig{Mechanism: s.kafkaMechanism, Username: s.kafkaUser, Password: s.kafkaPassword},
		tls:  s.kafkaTLS.config(),
	}
}

// plainKafka turns Kafka's SASL and TLS off.
func (s *security) plainKafka() {
	s.kafkaMechanism, s.kafkaUser, s.kafkaPassword = "", "", ""
	s.kafkaTLS.on, s.kafkaTLS.ca, s.kafkaTLS.cert, s.kafkaTLS.key, s.kafkaTLS.serverName, s.kafkaTLS.insecure = false, "", "", "", "", false
}

// cassandraTLS builds Cassandra's TLS configuration, nil when TLS is off.
func (s *security) cassandraTLS() (*tls.Config, error) {
	c, err := s.cassTLS.config().Build()
	if err != nil {
		return nil, fmt.Errorf("--cassandra-tls-*: %w", err)
	}
	return c, nil
}

func (s *security) validate() error {
	errs := append([]error(nil), s.envErrs...)
	sec := s.kafka()
	if _, err := sec.sasl.Build(); err != nil {
		errs = append(errs, fmt.Errorf("--kafka-sasl-*: %w", err))
	}
	if _, err := sec.tls.Build(); err != nil {
		errs = append(errs, fmt.Errorf("--kafka-tls-*: %w", err))
	}
	if s.cassPassword != "" && s.cassUser == "" {
		errs = append(errs, errors.New("--cassandra-password (or $"+cassPasswordVar+") without --cassandra-user"))
	}
	if _, err := s.cassandraTLS(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// env lists every setting as environment variables, so that a child
// process (the chaos command's runs) connects the same way without
// passwords on its command line.
func (s *security) env() []string {
	out := []string{
		kafkaMechanismVar + "=" + s.kafkaMechanism, kafkaUserVar + "=" + s.kafkaUser, kafkaPasswordVar + "=" + s.kafkaPassword,
		cassUserVar + "=" + s.cassUser, cassPasswordVar + "=" + s.cassPassword,
	}
	return append(append(out, s.kafkaTLS.env()...), s.cassTLS.env()...)
}

// envBool reads a boolean variable; unset or empty is false, and a value
// ParseBool rejects is added to errs.
func envBool(name string, errs *[]error) bool {
	raw := os.Getenv(name)
	if raw == "" {
		return false
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("$%s=%q: want true or false", name, raw))
	}
	return v
}
