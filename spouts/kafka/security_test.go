package kafka_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/internal/testenv"
	"github.com/squallstream/squall/spouts/kafka"
	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/trident/spout/spouttest"
	"github.com/squallstream/squall/txn"
)

// The tests of this file run against the SASL_SSL listener of the real
// Kafka (scripts/services.sh); topics are created and checked through the
// plaintext listener.

var mechanisms = []string{kafka.MechanismPlain, kafka.MechanismSCRAMSHA256, kafka.MechanismSCRAMSHA512}

// secureConfig is b.spoutConfig on the SASL_SSL listener with mechanism.
func secureConfig(t testing.TB, b *broker, l testenv.SASLListener, mechanism string, topics ...string) kafka.Config {
	cfg := b.spoutConfig(t, topics...)
	cfg.Brokers = l.Brokers
	cfg.SASL = kafka.SASLConfig{Mechanism: mechanism, Username: l.User, Password: l.Password}
	cfg.TLS = &kafka.TLSConfig{CAFile: l.CAFile}
	return cfg
}

// TestSASLSSLRead reads a topic through the SASL_SSL listener with each
// mechanism: metadata, offsets and fetches of the emitter, and the offset
// mirror's commit once the first batch committed.
func TestSASLSSLRead(t *testing.T) {
	b, l := realBroker(t), testenv.KafkaSASL(t)
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) {
			topic := b.topic(t, 1)
			b.values(t, topic, 0, 0, 10)
			cfg := secureConfig(t, b, l, mech, topic)
			cfg.MirrorInterval = 20 * time.Millisecond
			e := newSpout(t, cfg).NewEmitter(0)
			m, got := emit(t, e, 1, part(topic, 0), nil)
			wantValues(t, "first batch over "+mech, got, seq(0, 10))
			b.values(t, topic, 0, 10, 5)
			_, got = emit(t, e, 2, part(topic, 0), &m)
			wantValues(t, "second batch over "+mech, got, seq(10, 15))
			if err := e.(spout.Committer).Committed(context.Background(), 1); err != nil {
				t.Fatalf("Committed(1): %v", err)
			}
			waitMirrored(t, b, cfg.Topology, topic, 10)
		})
	}
}

// waitMirrored waits until group has offset committed for partition 0 of
// topic.
func waitMirrored(t *testing.T, b *broker, group, topic string, offset int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		resp, err := b.client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0}}})
		if err == nil {
			err = resp.Error
		}
		if err == nil && len(resp.Topics[topic]) == 1 && resp.Topics[topic][0].CommittedOffset == offset {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("mirror group %s: %+v (err %v), want offset %d committed", group, resp, err, offset)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestSASLSSLWrongPassword: New fails at once with ErrAuthentication,
// naming the mechanism and the user, never the password, and not with
// ErrUnreachable (which a caller might retry).
func TestSASLSSLWrongPassword(t *testing.T) {
	b, l := realBroker(t), testenv.KafkaSASL(t)
	topic := b.topic(t, 1)
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) {
			cfg := secureConfig(t, b, l, mech, topic)
			cfg.SASL.Password = "not-the-password-" + mech
			err := newErr(t, cfg)
			if !errors.Is(err, kafka.ErrAuthentication) || errors.Is(err, kafka.ErrUnreachable) {
				t.Fatalf("New: %v, want ErrAuthentication and not ErrUnreachable", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, mech) || !strings.Contains(msg, `"`+l.User+`"`) || strings.Contains(msg, cfg.SASL.Password) {
				t.Fatalf("New: %q: want the mechanism and the user, never the password", msg)
			}
			t.Log(err)
		})
	}
}

// TestSASLSSLUnknownCA: a broker certificate that the configured
// authorities did not sign fails New at once with ErrAuthentication.
func TestSASLSSLUnknownCA(t *testing.T) {
	b, l := realBroker(t), testenv.KafkaSASL(t)
	topic := b.topic(t, 1)

	cfg := secureConfig(t, b, l, kafka.MechanismSCRAMSHA256, topic)
	cfg.TLS.CAFile = otherCA(t)
	err := newErr(t, cfg)
	if !errors.Is(err, kafka.ErrAuthentication) || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("New with another CA: %v, want ErrAuthentication naming TLS", err)
	}
	t.Log(err)

	// A plaintext listener closes the connection at the TLS handshake:
	// that looks like a broker going away, so the error says which
	// security settings to compare with the listener's.
	cfg = b.spoutConfig(t, topic)
	cfg.TLS = &kafka.TLSConfig{CAFile: l.CAFile}
	err = newErr(t, cfg)
	if !errors.Is(err, kafka.ErrUnreachable) || !strings.Contains(err.Error(), "security protocol") {
		t.Fatalf("New with TLS on the plaintext listener: %v, want ErrUnreachable with a hint on the security protocol", err)
	}
	t.Log(err)
}

// TestSASLSSLDeadLetters: the dead-letter writer produces through the
// SASL_SSL listener: a malformed record lands in the dead-letter topic.
func TestSASLSSLDeadLetters(t *testing.T) {
	b, l := realBroker(t), testenv.KafkaSASL(t)
	topic, dlq := b.topic(t, 1), b.topic(t, 1)
	b.produce(t, topic, 0,
		kafkago.Message{Key: []byte("a"), Value: []byte("good")},
		kafkago.Message{Key: []byte("b"), Value: []byte("bad")},
		kafkago.Message{Key: []byte("c"), Value: []byte("good")})
	cfg := secureConfig(t, b, l, kafka.MechanismSCRAMSHA512, topic)
	cfg.DeadLetterTopic = dlq
	cfg.Decoder = kafka.DecoderFunc([]string{"value"}, func(r kafka.Record) ([]any, error) {
		if string(r.Value) == "bad" {
			return nil, errors.New("malformed value")
		}
		return []any{string(r.Value)}, nil
	})
	var c spouttest.Collector
	if _, err := newSpout(t, cfg).NewEmitter(0).Emit(context.Background(), txn.Attempt{TxID: 1}, part(topic, 0), nil, &c); err != nil {
		t.Fatalf("emit: %v", err)
	}
	if n := len(c.Tuples()); n != 2 {
		t.Fatalf("%d tuples, want the 2 good records", n)
	}
	letters := readAll(t, b, dlq, 1)
	h := headerMap(letters[0].Headers)
	if !bytes.Equal(letters[0].Value, []byte("bad")) || h[kafka.HeaderError] != "malformed value" || h[kafka.HeaderOffset] != "1" {
		t.Fatalf("dead letter %q with headers %v, want the bad record at offset 1", letters[0].Value, h)
	}
}

// newErr calls New, which must fail, within a bound that shows the
// failure is not retried until a timeout.
func newErr(t *testing.T, cfg kafka.Config) error {
	t.Helper()
	cfg.RequestTimeout = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	sp, err := kafka.New(ctx, cfg)
	if err == nil {
		sp.Close()
		t.Fatal("New succeeded")
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("New took %v to fail: it should not retry an authentication failure", took)
	}
	return err
}

// otherCA writes the PEM certificate of a fresh self-signed authority
// that signed nothing the broker has, and returns its file name.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "not the broker's CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}
