package monitor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/squallstream/squall/internal/httpguard"
)

// Start serves with every budget of httpguard's server set, on a
// listener holding at most MaxConns connections.
func TestStartSetsBudgets(t *testing.T) {
	s, err := Start(NewRegistry(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	}()
	h := s.http
	if h.ReadHeaderTimeout != httpguard.DefaultReadHeaderTimeout || h.ReadTimeout != httpguard.DefaultReadTimeout ||
		h.WriteTimeout != httpguard.DefaultWriteTimeout || h.IdleTimeout != httpguard.DefaultIdleTimeout ||
		h.MaxHeaderBytes != httpguard.DefaultMaxHeaderBytes {
		t.Fatalf("server budgets: read header %v, read %v, write %v, idle %v, header bytes %d",
			h.ReadHeaderTimeout, h.ReadTimeout, h.WriteTimeout, h.IdleTimeout, h.MaxHeaderBytes)
	}
	if got := fmt.Sprintf("%T", s.ln); got != "*httpguard.Limited" || h.ConnState == nil {
		t.Fatalf("listener %s, want httpguard.LimitListener's", got)
	}
}
