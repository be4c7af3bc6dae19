package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDemoAcksEverySentenceOnceThroughFailuresAndACrash(t *testing.T) {
	var out bytes.Buffer
	o := options{Sentences: 2000, FailRate: 0.05, CrashAfter: 3000, Seed: 7, Timeout: time.Minute}
	if err := run(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"acked      2000 ", "crashes    1 ", "for 12800 expected"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "failed     0 ") {
		t.Errorf("no failures were injected:\n%s", text)
	}
}

func TestDemoRejectsBadOptions(t *testing.T) {
	for _, o := range []options{
		{Sentences: 0, Timeout: time.Second},
		{Sentences: 1, FailRate: 1, Timeout: time.Second},
		{Sentences: 1, CrashAfter: -1, Timeout: time.Second},
		{Sentences: 1},
	} {
		if err := run(context.Background(), o, &bytes.Buffer{}); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}
