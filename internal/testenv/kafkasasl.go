package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Variables read by KafkaSASL: the SASL_SSL listener of the real Kafka and
// its test user (scripts/services.sh env prints them).
const (
	KafkaSASLBrokersVar  = "SQUALL_KAFKA_SASL_BROKERS"
	KafkaCAFileVar       = "SQUALL_KAFKA_CA_FILE"
	KafkaSASLUserVar     = "SQUALL_KAFKA_SASL_TEST_USER"
	KafkaSASLPasswordVar = "SQUALL_KAFKA_SASL_TEST_PASSWORD"
)

// SASLListener is the real Kafka's SASL_SSL listener: TLS with a
// self-signed certificate (CAFile, PEM) and one user known to the PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512 mechanisms.
type SASLListener struct {
	Brokers  []string
	CAFile   string
	User     string
	Password string
}

// KafkaSASL returns the SASL_SSL listener from SQUALL_KAFKA_SASL_BROKERS,
// SQUALL_KAFKA_CA_FILE, SQUALL_KAFKA_SASL_TEST_USER and
// SQUALL_KAFKA_SASL_TEST_PASSWORD. If one is unset or empty it skips the
// test, or fails it under CI.
func KafkaSASL(t testing.TB) SASLListener {
	t.Helper()
	l, msg := lookupSASL(os.Getenv)
	if msg != "" {
		skipOrFail(t, msg)
	}
	return l
}

// lookupSASL reads the listener; msg is non-empty when it is unusable.
func lookupSASL(getenv func(string) string) (l SASLListener, msg string) {
	brokers, msg := lookup(getenv, "Kafka SASL_SSL listener", KafkaSASLBrokersVar)
	if msg != "" {
		return SASLListener{}, msg
	}
	l = SASLListener{Brokers: brokers, CAFile: getenv(KafkaCAFileVar),
		User: getenv(KafkaSASLUserVar), Password: getenv(KafkaSASLPasswordVar)}
	for _, v := range []struct{ name, value string }{
		{KafkaCAFileVar, l.CAFile}, {KafkaSASLUserVar, l.User}, {KafkaSASLPasswordVar, l.Password},
	} {
		if v.value == "" {
			return SASLListener{}, fmt.Sprintf("%s is set but %s is not: export every variable of "+
				"`scripts/services.sh env` (eval \"$(scripts/services.sh env)\", or run `make test`)", KafkaSASLBrokersVar, v.name)
		}
	}
	return l, ""
}
