package logfile

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

func TestReadableDurations(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{ReplaceAttr: ReadableDurations}))
	log.Info("waited", "backoff", 1500*time.Millisecond, slog.Duration("timeout", 30*time.Second),
		slog.Group("retry", "wait", 250*time.Millisecond), "count", 3)
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	retry, _ := got["retry"].(map[string]any)
	if got["backoff"] != "1.5s" || got["timeout"] != "30s" || retry["wait"] != "250ms" || got["count"] != 3.0 {
		t.Fatalf("logged %s", b.Bytes())
	}
}
