package kafka

import (
	"crypto/x509"
	"errors"
	"fmt"
	"testing"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/failure"
)

// TestAuthFailuresAreNotReconnects: a SASL or TLS failure of a request is
// reported (operators see it) and does not make the spout reconnect, which
// would not help; a dropped connection still does.
func TestAuthFailuresAreNotReconnects(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("fetch: %w", kafkago.SASLAuthenticationFailed),
		fmt.Errorf("fetch: %w", kafkago.UnsupportedSASLMechanism),
		fmt.Errorf("dial: %w", x509.UnknownAuthorityError{}),
	} {
		marked, reconnect := classify(err)
		if reconnect || !failure.IsReported(marked) || !errors.Is(marked, err) {
			t.Errorf("classify(%v) = %v (kind %v), reconnect %v; want reported, no reconnect", err, marked, failure.KindOf(marked), reconnect)
		}
	}
	if _, reconnect := classify(fmt.Errorf("read: %w", errors.New("unexpected EOF"))); !reconnect {
		t.Error("an untyped connection error no longer reconnects")
	}
}
