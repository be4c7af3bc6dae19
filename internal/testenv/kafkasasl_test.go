package testenv

import (
	"slices"
	"strings"
	"testing"
)

func TestLookupSASL(t *testing.T) {
	full := map[string]string{
		KafkaSASLBrokersVar:  " 127.0.0.1:19094 ",
		KafkaCAFileVar:       "/srv/kafka/ca.pem",
		KafkaSASLUserVar:     "squall",
		KafkaSASLPasswordVar: "secret",
	}
	l, msg := lookupSASL(func(k string) string { return full[k] })
	if msg != "" || !slices.Equal(l.Brokers, []string{"127.0.0.1:19094"}) || l.CAFile != "/srv/kafka/ca.pem" ||
		l.User != "squall" || l.Password != "secret" {
		t.Fatalf("lookupSASL = %+v, %q", l, msg)
	}
	for _, missing := range []string{KafkaSASLBrokersVar, KafkaCAFileVar, KafkaSASLUserVar, KafkaSASLPasswordVar} {
		l, msg := lookupSASL(func(k string) string {
			if k == missing {
				return ""
			}
			return full[k]
		})
		if msg == "" || !strings.Contains(msg, missing) || l.Brokers != nil {
			t.Errorf("without %s: %+v, %q; want a message naming it", missing, l, msg)
		}
	}
}
