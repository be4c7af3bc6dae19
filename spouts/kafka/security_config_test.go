package kafka_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/squallstream/squall/spouts/kafka"
)

// TestSecurityValidate checks the SASL and TLS settings Validate (and so
// New) rejects, without a broker.
func TestSecurityValidate(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := kafka.Config{Brokers: []string{"127.0.0.1:9"}, Topics: []string{"t"}, Topology: "x"}
	for _, tc := range []struct {
		name string
		sasl kafka.SASLConfig
		tls  *kafka.TLSConfig
		want string // in the error; empty: valid
	}{
		{name: "off"},
		{name: "plain", sasl: kafka.SASLConfig{Mechanism: "PLAIN", Username: "u", Password: "p"}},
		{name: "scram lower case", sasl: kafka.SASLConfig{Mechanism: "scram-sha-512", Username: "u", Password: "p"}},
		{name: "tls with system roots", tls: &kafka.TLSConfig{}},
		{name: "unknown mechanism", sasl: kafka.SASLConfig{Mechanism: "GSSAPI", Username: "u", Password: "p"}, want: `unknown Mechanism "GSSAPI"`},
		{name: "no user", sasl: kafka.SASLConfig{Mechanism: "PLAIN", Password: "p"}, want: "without a Username"},
		{name: "no password", sasl: kafka.SASLConfig{Mechanism: "SCRAM-SHA-256", Username: "u"}, want: `user "u" without a Password`},
		{name: "user without mechanism", sasl: kafka.SASLConfig{Username: "u", Password: "p"}, want: "without a Mechanism"},
		{name: "missing CA file", tls: &kafka.TLSConfig{CAFile: filepath.Join(dir, "none.pem")}, want: "CAFile"},
		{name: "CA file without PEM", tls: &kafka.TLSConfig{CAFile: notPEM}, want: "holds no PEM certificate"},
		{name: "cert without key", tls: &kafka.TLSConfig{CertFile: notPEM}, want: "CertFile and KeyFile go together"},
		{name: "bad key pair", tls: &kafka.TLSConfig{CertFile: notPEM, KeyFile: notPEM}, want: "client certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.SASL, cfg.TLS = tc.sasl, tc.tls
			err := cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, kafka.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want ErrInvalidConfig containing %q", err, tc.want)
			}
			if tc.sasl.Password != "" && strings.Contains(err.Error(), tc.sasl.Password+`"`) {
				t.Fatalf("Validate: %v shows the password", err)
			}
		})
	}
}

// TestSASLBuild: each mechanism builds the kafka-go mechanism of its name.
func TestSASLBuild(t *testing.T) {
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		m, err := kafka.SASLConfig{Mechanism: strings.ToLower(mech), Username: "u", Password: "p"}.Build()
		if err != nil || m == nil || m.Name() != mech {
			t.Fatalf("Build(%s) = %v, %v", mech, m, err)
		}
	}
	if m, err := (kafka.SASLConfig{}).Build(); m != nil || err != nil {
		t.Fatalf("Build of the zero SASLConfig = %v, %v, want nil, nil", m, err)
	}
}

// TestSASLPasswordNotPrinted: printing a Config in any of the usual ways
// does not show the password.
func TestSASLPasswordNotPrinted(t *testing.T) {
	cfg := kafka.Config{SASL: kafka.SASLConfig{Mechanism: "SCRAM-SHA-256", Username: "squall", Password: "hunter2-secret"}}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(format, cfg)
		if strings.Contains(out, "hunter2-secret") || !strings.Contains(out, "squall") {
			t.Errorf("%s of a Config: %s: want the user, not the password", format, out)
		}
	}
}
