package runtime

import (
	"testing"
	"time"
)

// TestCoordConfigTicks: the backoff bounds become BatchEmitInterval
// ticks, rounded up.
func TestCoordConfigTicks(t *testing.T) {
	cfg := Config{BatchEmitInterval: 50 * time.Millisecond, RetryBackoff: 100 * time.Millisecond, MaxRetryBackoff: 30 * time.Second}
	if cc := coordConfig(cfg, 1); cc.RetryBackoff != 2 || cc.MaxRetryBackoff != 600 {
		t.Fatalf("ticks: %d..%d, want 2..600", cc.RetryBackoff, cc.MaxRetryBackoff)
	}
	cfg.RetryBackoff = 60 * time.Millisecond
	if cc := coordConfig(cfg, 1); cc.RetryBackoff != 2 {
		t.Fatalf("60ms in 50ms ticks: %d, want 2", cc.RetryBackoff)
	}
}
