package logfile

import (
	"log/slog"
	"time"
)

// ReadableDurations is a slog.HandlerOptions.ReplaceAttr that writes a
// time.Duration as Go writes it ("1.5s", "250ms") instead of the integer
// nanoseconds slog.JSONHandler writes. Durations logged through an
// slog.Duration attribute and through a plain time.Duration value are
// both rewritten.
func ReadableDurations(_ []string, a slog.Attr) slog.Attr {
	switch v := a.Value; {
	case v.Kind() == slog.KindDuration:
		return slog.String(a.Key, v.Duration().String())
	case v.Kind() == slog.KindAny:
		if d, ok := v.Any().(time.Duration); ok {
			return slog.String(a.Key, d.String())
		}
	}
	return a
}
