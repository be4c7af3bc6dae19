package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWrongEtcdEndpointFailsFast: a client command given an etcd
// endpoint where nothing answers fails within --etcd-dial-timeout,
// naming the endpoint, not after its whole --timeout.
func TestWrongEtcdEndpointFailsFast(t *testing.T) {
	p, out := program(t, nil)
	start := time.Now()
	code := Run(context.Background(), p, []string{"list", "--etcd-endpoints", "127.0.0.1:1", "--etcd-dial-timeout", "1s", "--timeout", "2m"})
	if code == ExitOK {
		t.Fatalf("list against no etcd succeeded: %s", out.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("list took %v to fail, want about the dial timeout", d)
	}
	if !strings.Contains(out.String(), "127.0.0.1:1") {
		t.Fatalf("the error does not name the endpoint: %s", out.String())
	}
}
