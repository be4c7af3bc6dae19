package logfile

import "log/slog"

// ReadableDurations is a slog.HandlerOptions.ReplaceAttr that writes a
// time.Duration as Go writes it ("1.5s", "250ms") instead of the integer
// nanoseconds slog.JSONHandler writes. slog stores every time.Duration
// value, logged as an slog.Duration attribute or as a plain value, with
// KindDuration.
func ReadableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
