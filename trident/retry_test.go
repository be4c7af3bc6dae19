package trident

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/state"
	"github.com/squallstream/squall/state/statetest"
	"github.com/squallstream/squall/trident/internal/coord"
	"github.com/squallstream/squall/trident/spout"
)

// logRecords is a slog handler that keeps every record, for counting.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// lines returns the messages of the records at level or above.
func (h *logRecords) lines(level slog.Level) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.records {
		if r.Level >= level {
			out = append(out, r.Message)
		}
	}
	return out
}

// attr returns the value of attribute key of the first record with msg.
func (h *logRecords) attr(msg, key string) (slog.Value, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Message != msg {
			continue
		}
		var v slog.Value
		found := false
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				v, found = a.Value, true
				return false
			}
			return true
		})
		return v, found
	}
	return slog.Value{}, false
}

var errDown = errors.New("connection refused")

// outageMap fails the first n puts of a memory map with an outage and
// records the (virtual) time of every put.
func outageMap(n int64) (BackingFactory, *[]time.Time, *sync.Mutex) {
	mem := state.NewMemory("counts")
	var puts atomic.Int64
	var mu sync.Mutex
	var times []time.Time
	fm := statetest.NewFaultMap[[]byte](mem, func(op statetest.Op, _ int, _ []state.Key) statetest.Fault {
		if op != statetest.OpPut {
			return statetest.Fault{}
		}
		mu.Lock()
		times = append(times, time.Now())
		mu.Unlock()
		if puts.Add(1) <= n {
			return statetest.Fault{Err: failure.Unavailable(errDown)}
		}
		return statetest.Fault{}
	})
	return func(context.Context, int, int) (state.BackingMap[[]byte], error) { return fm, nil }, &times, &mu
}

// TestOutageHealsWithoutHaltingAndLogsOnce: an outage of ten times
// MaxAttempts failed attempts neither halts the topology (outages are not
// counted) nor logs per attempt: one line when the stream starts failing,
// one when it recovers, with the attempts and the duration. The counts are
// exact afterwards.
func TestOutageHealsWithoutHaltingAndLogsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxAttempts, outage = 3, 30
		backing, _, _ := outageMap(outage)
		f := Opaque[int64]("counts", backing)
		logs := &logRecords{}
		cfg := Config{}
		cfg.MaxAttempts = maxAttempts
		cfg.MaxRetryBackoff = time.Second
		cfg.Topology.Logger = slog.New(logs)
		r := submit(t, wordCount(newFixed(1, sentences...), f, 1), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatalf("an outage of %d attempts with MaxAttempts %d: %v", outage, maxAttempts, err)
		}
		if got := readCounts(t, f, 1, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
		if n := r.FailedAttempts(); n < outage {
			t.Fatalf("FailedAttempts = %d, want at least %d", n, outage)
		}
		warns := logs.lines(slog.LevelWarn)
		if len(warns) != 1 || !strings.Contains(warns[0], "stream failing") {
			t.Fatalf("%d failed attempts logged %d warnings, want 1 (stream failing): %q", outage, len(warns), warns)
		}
		v, ok := logs.attr("trident: stream recovered", "failed_attempts")
		if !ok || v.Int64() != outage {
			t.Fatalf("recovery line: failed_attempts %v (found %v), want %d", v, ok, outage)
		}
		if v, ok := logs.attr("trident: stream failing; batches are retried with backoff", "unavailable"); !ok || !v.Bool() {
			t.Fatalf("the failing line does not say the dependency is unavailable: %v", v)
		}
	})
}

// TestRetryBackoffSpacesReplays: the replays of a failing batch wait an
// exponential backoff (100ms doubling, jittered down by at most half), not
// the emit interval.
func TestRetryBackoffSpacesReplays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const outage = 6
		backing, times, mu := outageMap(outage)
		cfg := Config{}
		cfg.BatchEmitInterval = 10 * time.Millisecond
		r := submit(t, wordCount(newFixed(4, sentences...), Opaque[int64]("counts", backing), 1), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(*times) < outage+1 {
			t.Fatalf("%d puts, want %d", len(*times), outage+1)
		}
		for i := 1; i <= outage; i++ {
			gap := (*times)[i].Sub((*times)[i-1])
			nominal := DefaultRetryBackoff << (i - 1)
			if gap < nominal/2 || gap > nominal+time.Second {
				t.Fatalf("replay %d came %v after failure %d, want about %v (jittered down by at most half)", i, gap, i, nominal)
			}
		}
	})
}

// TestRetryBackoffAfterALongWait: a batch that fails after the master
// slept through thousands of ticks (nothing could change while it was
// in flight) still waits its full backoff before the replay: the master
// delivers the ticks it slept through before the failure, so the backoff
// is counted from the failure's tick, not from the last tick it was
// woken for.
func TestRetryBackoffAfterALongWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu       sync.Mutex
			calls    []time.Time
			release  = make(chan struct{})
			failOnce sync.Once
		)
		fn := FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			var err error
			failOnce.Do(func() {
				<-release
				err = retryable(errorString("the first attempt fails after 5 s"))
			})
			mu.Lock()
			calls = append(calls, time.Now())
			mu.Unlock()
			if err != nil {
				return err
			}
			return split(ctx, tu, out)
		})
		tt := NewTopology("late-failure")
		s := tt.NewStream("sentences", FixedSource(Fields{"sentence"}, sentenceBatches()...))
		PersistentAggregate(s.Each(Fields{"sentence"}, fn, "word").GroupBy("word"),
			OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		cfg := Config{BatchEmitInterval: time.Millisecond}
		cfg.Topology.SpoutIdleWait = time.Hour // no NextTuple while the batch is held
		r := submit(t, tt, cfg)
		time.Sleep(5 * time.Second) // 5000 ticks, within the message timeout
		close(release)
		if err := r.WaitCommitted(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(calls) < 2 {
			t.Fatalf("%d calls, want the failed one and its replay", len(calls))
		}
		if gap := calls[1].Sub(calls[0]); gap < DefaultRetryBackoff/2 {
			t.Fatalf("the replay came %v after the failure, want at least %v (the first backoff, %v, jittered down by at most half)",
				gap, DefaultRetryBackoff/2, DefaultRetryBackoff)
		}
	})
}

// TestCrashLoopHaltsAcrossRestarts: a batch that panics the worker every
// time never reports a failure, yet it halts the topology after
// MaxAttempts, because each restart counts and the count is persisted.
func TestCrashLoopHaltsAcrossRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFixed(1, sentences...)
		tt := NewTopology("crashloop")
		s := tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return src }))
		g := s.Each(Fields{"sentence"}, FunctionFunc(func(ctx context.Context, tu Tuple, out Collector) error {
			if tu.String("sentence") == sentences[1] {
				panic("poison sentence")
			}
			return split(ctx, tu, out)
		}), "word").GroupBy("word")
		PersistentAggregate(g, OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
		cfg := Config{}
		cfg.MaxAttempts = 3
		cfg.Topology.RestartMinBackoff = 100 * time.Millisecond
		r := submit(t, tt, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		err := r.WaitCommitted(ctx, 2)
		if !errors.Is(err, ErrAttemptLimit) || !errors.Is(err, coord.ErrRestarted) || !strings.Contains(err.Error(), "batch 2 failed 3 times") {
			t.Fatalf("wait = %v, want the attempt limit of batch 2 after restarts", err)
		}
		if h := r.Health(); h.Crashes != 3 {
			t.Fatalf("crashes = %d, want 3", h.Crashes)
		}
		if r.Committed() != 1 {
			t.Fatalf("committed %v, want 1", r.Committed())
		}
	})
}

// corruptBacking returns a backing factory whose map holds an undecodable
// value under key "the".
func corruptBacking(t *testing.T) BackingFactory {
	mem := state.NewMemory("counts")
	if err := mem.MultiPut(context.Background(), []state.Key{state.MustKey("the")}, [][]byte{{0xc1}}); err != nil {
		t.Fatal(err)
	}
	return func(context.Context, int, int) (state.BackingMap[[]byte], error) { return mem, nil }
}

// TestCorruptStateHalts: by default a corrupt stored value halts the
// topology after CorruptAttempts failed attempts (with backoff, and
// without a warning per attempt), with an error naming the map, the key
// and the cause.
func TestCorruptStateHalts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logRecords{}
		cfg := Config{}
		cfg.Topology.Logger = slog.New(logs)
		r := submit(t, wordCount(newFixed(1, sentences...), Opaque[int64]("counts", corruptBacking(t)), 1), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		err := r.WaitCommitted(ctx, 1)
		var de *state.DecodeError
		if !errors.Is(err, ErrAttemptLimit) || !errors.As(err, &de) || de.Map != "counts" || de.Key.String() != "[the]" ||
			!strings.Contains(err.Error(), "corrupt stored value") {
			t.Fatalf("wait = %v, want a halt naming the corrupt key of counts", err)
		}
		if n := r.FailedAttempts(); n != CorruptAttempts {
			t.Fatalf("FailedAttempts = %d, want %d", n, CorruptAttempts)
		}
		// The bolt's report and the master's failing line when it starts,
		// and the halt: not one per attempt.
		if warns := logs.lines(slog.LevelWarn); len(warns) > 3 {
			t.Fatalf("%d warnings: %q", len(warns), warns)
		}
	})
}

// TestCorruptStateQuarantine: with CorruptQuarantine the corrupt value
// goes to the quarantine with its bytes, is counted, and the key counts
// from scratch.
func TestCorruptStateQuarantine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &MemoryQuarantine{}
		cfg := Config{}
		cfg.OnCorruptState = CorruptQuarantine
		cfg.Quarantine = q
		f := Opaque[int64]("counts", corruptBacking(t))
		r := submit(t, wordCount(newFixed(1, sentences...), f, 1), cfg)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := r.WaitCommitted(ctx, 4); err != nil {
			t.Fatal(err)
		}
		if got := readCounts(t, f, 1, words()...); !maps.Equal(got, wantCounts()) {
			t.Fatalf("counts = %v, want %v", got, wantCounts())
		}
		vs := q.Values()
		if len(vs) != 1 || vs[0].Map != "counts" || vs[0].Key.String() != "[the]" || !bytes.Equal(vs[0].Raw, []byte{0xc1}) ||
			vs[0].Err == nil || vs[0].Attempt.TxID != 1 || vs[0].Topology != "wordcount" {
			t.Fatalf("quarantined %+v", vs)
		}
		if r.Quarantined() != 1 || r.Err() != nil {
			t.Fatalf("Quarantined = %d, Err = %v", r.Quarantined(), r.Err())
		}
	})
}

func TestRetryConfigValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Config)
	}{
		{"negative backoff", func(c *Config) { c.RetryBackoff = -time.Second }},
		{"negative max backoff", func(c *Config) { c.MaxRetryBackoff = -time.Second }},
		{"max below base", func(c *Config) { c.RetryBackoff, c.MaxRetryBackoff = 2*time.Second, time.Second }},
		{"quarantine without sink", func(c *Config) { c.OnCorruptState = CorruptQuarantine }},
		{"unknown policy", func(c *Config) { c.OnCorruptState = 9 }},
	} {
		cfg := Config{}
		c.edit(&cfg)
		if err := cfg.validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: validate = %v, want ErrInvalid", c.name, err)
		}
	}
	cfg := Config{}
	cfg.RetryBackoff = time.Minute // above the default cap: the cap follows
	if err := cfg.validate(); err != nil {
		t.Fatalf("backoff above the default cap: %v", err)
	}
	cfg.BatchEmitInterval = 50 * time.Millisecond
	cfg.RetryBackoff, cfg.MaxRetryBackoff = 0, 0
	if rc := cfg.runtimeConfig(); rc.RetryBackoff != DefaultRetryBackoff || rc.MaxRetryBackoff != DefaultMaxRetryBackoff {
		t.Fatalf("runtime backoff %v..%v, want the defaults %v..%v", rc.RetryBackoff, rc.MaxRetryBackoff, DefaultRetryBackoff, DefaultMaxRetryBackoff)
	}
}
