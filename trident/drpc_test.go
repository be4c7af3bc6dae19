package trident

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/squallstream/squall/drpc"
	"github.com/squallstream/squall/failure"
	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/trident/spout"
)

// drpcWordCount is Storm's TridentWordCount: counts of the sentences of
// txid 1, and a DRPC function "words" that splits its arguments and
// returns each word's count, queried from the counts' own tasks.
func drpcWordCount(server *drpc.Server) *Topology {
	tt := NewTopology("drpc-wordcount")
	counts := PersistentAggregate(
		tt.NewStream("sentences", BatchSource(Fields{"sentence"}, func() spout.Batcher { return &onlyAt{txid: 1, sentences: sentences} })).
			FlatMap(splitWords, "word").GroupBy("word").Parallelism(3),
		OpaqueMemory[int64]("counts"), Fields{"word"}, count{}, "count")
	q := tt.NewDRPCStream("words", server).FlatMap(FlatMapFunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
		for _, w := range strings.Fields(t.String("args")) {
			out.Emit(w)
		}
		return nil
	}), "word")
	ReturnResults(StateQuery(q, counts, Fields{"word"}, mapGet{}, "count"), "words", "word", "count")
	return tt
}

// TestDRPCWordCount: concurrent requests each get their own words'
// counts, as of the committed batches.
func TestDRPCWordCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		r := submit(t, drpcWordCount(server), Config{MaxBatchesInFlight: 3})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, 1); err != nil {
			t.Fatal(err)
		}
		want := wantCounts()
		queries := []string{"the cow", "moon", "nothing at all", "", "the the"}
		var wg sync.WaitGroup
		errs := make([]error, 20)
		for i := range errs {
			wg.Go(func() {
				args := queries[i%len(queries)]
				res, err := server.Execute(ctx, "words", args, 0)
				if err != nil {
					errs[i] = err
					return
				}
				var got []string
				for _, row := range res.Rows {
					got = append(got, fmt.Sprintf("%v=%v", row[0], row[1]))
				}
				var exp []string
				for _, w := range strings.Fields(args) {
					exp = append(exp, fmt.Sprintf("%v=%v", w, want[w]))
				}
				slices.Sort(got)
				slices.Sort(exp)
				if !slices.Equal(got, exp) {
					errs[i] = fmt.Errorf("words(%q) = %v, want %v", args, got, exp)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDRPCFailedBatchFailsItsRequest: a request whose batch fails gets
// the failure, with its cause, and later requests are served.
func TestDRPCFailedBatchFailsItsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		tt := NewTopology("drpc-fail")
		echo := tt.NewDRPCStream("echo", server).Each(Fields{"args"}, FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
			if t.String("args") == "boom" {
				return failure.Retryable(errors.New("echo: cannot say boom"))
			}
			out.Emit(strings.ToUpper(t.String("args")))
			return nil
		}), "upper")
		ReturnResults(echo, "echo", "upper")
		submit(t, tt, Config{})
		ctx := context.Background()
		_, err := server.Execute(ctx, "echo", "boom", 0)
		if !errors.Is(err, drpc.ErrFailed) || !strings.Contains(err.Error(), "echo: cannot say boom") {
			t.Fatalf("echo(boom) = %v, want drpc.ErrFailed with the cause", err)
		}
		res, err := server.Execute(ctx, "echo", "hi", 0)
		if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "HI" {
			t.Fatalf("echo(hi) = %+v, %v", res, err)
		}
	})
}

// TestDRPCStopFailsWaitingRequests: requests waiting when the topology
// stops get drpc.ErrStopped, and later ones drpc.ErrStopped too.
func TestDRPCStopFailsWaitingRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		cfg := Config{}
		cfg.Topology.StartInactive = true // no batch takes the request
		r := submit(t, drpcWordCount(server), cfg)
		done := make(chan error, 1)
		go func() { _, err := server.Execute(context.Background(), "words", "the", time.Hour); done <- err }()
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, drpc.ErrStopped) {
			t.Fatalf("a waiting request got %v, want drpc.ErrStopped", err)
		}
		if _, err := server.Execute(context.Background(), "words", "the", time.Second); !errors.Is(err, drpc.ErrStopped) {
			t.Fatalf("a request after the stop got %v, want drpc.ErrStopped", err)
		}
	})
}

// TestDRPCDeclarationErrors: a function without ReturnResults, results
// returned for an undeclared function, and a DRPC topology split across
// worker processes are refused.
func TestDRPCDeclarationErrors(t *testing.T) {
	server := drpc.NewServer(drpc.Config{})
	tt := NewTopology("t")
	tt.NewDRPCStream("f", server)
	if _, err := tt.Submit(context.Background(), Config{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "no ReturnResults") {
		t.Fatalf("Submit without ReturnResults: %v", err)
	}
	tt = NewTopology("t")
	ReturnResults(tt.NewStream("s", FixedSource(Fields{"v"})), "g", "v")
	if _, err := tt.Submit(context.Background(), Config{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "no DRPC stream") {
		t.Fatalf("Submit with ReturnResults of an undeclared function: %v", err)
	}
	_, err := drpcWordCount(server).RunShare(Config{Store: coordstore.NewMemory()}, Share{Count: 2, Generation: 1, Peers: map[int]string{1: "x:1"}})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "DRPC streams run in one process") {
		t.Fatalf("RunShare of a DRPC topology in two shares: %v", err)
	}
}

// BenchmarkDRPCRequest measures the latency of one DRPC request at a time
// against a word count (ns/op is the latency), by batch emit interval.
func BenchmarkDRPCRequest(b *testing.B) {
	for _, every := range []time.Duration{time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond} {
		b.Run("every="+every.String(), func(b *testing.B) {
			server := drpc.NewServer(drpc.Config{})
			r, err := drpcWordCount(server).Submit(context.Background(), Config{BatchEmitInterval: every, MaxBatchesInFlight: 3})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Stop(context.Background())
			ctx := context.Background()
			if err := r.WaitCommitted(ctx, 1); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := server.Execute(ctx, "words", "the cow jumped", 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDRPCDeadlineCancelsTheRequestsWork: a request whose deadline passes
// while its batch works is answered 504 at its deadline; the function
// working for it sees its context done with the request's error, what it
// emits afterwards goes no further and its error is dropped (the batch
// neither fails nor dead-letters); the batch commits and the next request
// is answered.
func TestDRPCDeadlineCancelsTheRequestsWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		server := drpc.NewServer(drpc.Config{})
		tt := NewTopology("drpc-deadline")
		var (
			mu         sync.Mutex
			cause      error // what the slow function's context said
			downstream int   // tuples that reached the function after it
		)
		slow := tt.NewDRPCStream("slow", server).FlatMap(FlatMapFunctionFunc(func(ctx context.Context, t Tuple, out Collector) error {
			if t.String("args") != "slow" {
				out.Emit(1)
				return nil
			}
			select {
			case <-ctx.Done():
				mu.Lock()
				cause = context.Cause(ctx)
				mu.Unlock()
			case <-time.After(time.Hour):
			}
			for i := range 1000 { // the work goes on, ignoring the context
				out.Emit(i)
			}
			return ctx.Err()
		}), "n")
		counted := slow.Each(Fields{"n"}, FunctionFunc(func(_ context.Context, t Tuple, out Collector) error {
			mu.Lock()
			downstream++
			mu.Unlock()
			out.Emit(t.Get("n"))
			return nil
		}), "m")
		ReturnResults(counted, "slow", "m")
		r := submit(t, tt, Config{MaxBatchesInFlight: 1})
		h := server.Handler()
		post := func(args string) (*httptest.ResponseRecorder, time.Duration) {
			start := time.Now()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("POST", "/drpc/slow?timeout=1s", strings.NewReader(args)))
			return w, time.Since(start)
		}

		w, took := post("slow")
		if w.Code != http.StatusGatewayTimeout || took > time.Second {
			t.Fatalf("slow: %d %s after %v, want 504 at the 1s deadline", w.Code, w.Body, took)
		}
		synctest.Wait()
		mu.Lock()
		seen, went := cause, downstream
		mu.Unlock()
		if !errors.Is(seen, drpc.ErrTimeout) || went != 0 {
			t.Fatalf("the slow function's context ended with %v, and %d tuples went on; want drpc.ErrTimeout and none", seen, went)
		}
		w, took = post("quick")
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"rows":[[1]]`) || took > 100*time.Millisecond {
			t.Fatalf("quick after slow: %d %s after %v, want 200 with one row, without waiting", w.Code, w.Body, took)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.WaitCommitted(ctx, r.Committed()+1); err != nil {
			t.Fatal(err)
		}
		if h := r.Health(); r.FailedAttempts() != 0 || r.Rejected() != 0 || r.Err() != nil || h.Crashes != 0 {
			t.Fatalf("%d failed attempts, %d rejected tuples, %d crashes (last %+v), error %v; want none", r.FailedAttempts(), r.Rejected(), h.Crashes, h.LastCrash, r.Err())
		}
	})
}
