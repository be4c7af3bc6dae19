package monitor

import (
	"reflect"
	"testing"
)

func TestParseLogLine(t *testing.T) {
	l := parseLogLine(`{"time":"2026-12-01T17:00:00Z","level":"WARN","msg":"slow","txid":7,"room":"a b"}`)
	want := LogLine{Time: "2026-12-01T17:00:00Z", Level: "WARN", Msg: "slow", Attrs: map[string]any{"txid": 7.0, "room": "a b"}}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("parsed %+v", l)
	}
	if got := l.AttrList(); !reflect.DeepEqual(got, []string{`room="a b"`, "txid=7"}) {
		t.Fatalf("attrs %q", got)
	}
	for _, raw := range []string{"plain text", "[1,2]", "null", `{"msg":`} {
		if l := parseLogLine(raw); l.Raw != raw || l.Msg != "" {
			t.Errorf("%q parsed as %+v", raw, l)
		}
	}
	if l := parseLogLine(`{"msg":"m","level":3}`); l.Msg != "m" || l.Level != "" || l.Attrs["level"] != 3.0 {
		t.Errorf("a non-string level: %+v", l)
	}
}
