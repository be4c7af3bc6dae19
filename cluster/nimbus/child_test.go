package nimbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/squallstream/squall/cluster/leader"
)

// The process-level tests run nimbuses in child processes: this test
// binary again, with childVar set, runs childMain instead of the tests.
const childVar = "SQUALL_NIMBUS_TEST_CHILD"

// childMain runs one nimbus from the environment, plus a control server
// for the test (its URL printed as "control URL" on standard output):
//
//	POST /submit?topology=T        body: the code; Submit
//	POST /assign?topology=T&value=V WriteAssignment
//	POST /stale-write?key=K&value=V a write through the last leadership
//	                               this nimbus held, even if it has ended
//	POST /wait-leading             returns once this nimbus leads (its
//	                               election key can exist a moment before)
func childMain() int {
	env := func(k string) string { return os.Getenv("CHILD_" + k) }
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("nimbus", env("ID"))
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(env("ENDPOINTS"), ","),
		DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		log.Error("etcd client", "err", err)
		return 1
	}
	defer cli.Close()
	ttl, _ := time.ParseDuration(env("TTL"))
	rf := 1
	fmt.Sscan(env("RF"), &rf)
	n, err := New(Config{Client: cli, Prefix: env("PREFIX"), ID: env("ID"), CodeDir: env("DIR"), TTL: ttl,
		ReplicationFactor: rf, ReplicationTimeout: 30 * time.Second, ScanInterval: time.Second, Logger: log})
	if err != nil {
		log.Error("nimbus", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// Remember the last leadership held, for /stale-write.
	var mu sync.Mutex
	var last *leader.Leadership
	go func() {
		for {
			ch := n.Candidate().Changed()
			if l := n.Candidate().Current(); l != nil {
				mu.Lock()
				last = l
				mu.Unlock()
				log.Info("child: leading", "rev", l.Rev())
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()

	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, err error) {
		if err != nil {
			code := http.StatusInternalServerError
			switch {
			case errors.Is(err, leader.ErrDeposed):
				code = http.StatusConflict
			case errors.Is(err, leader.ErrNotLeader):
				code = http.StatusMisdirectedRequest
			}
			http.Error(w, err.Error(), code)
			return
		}
		io.WriteString(w, "ok\n")
	}
	mux.HandleFunc("POST /submit", func(w http.ResponseWriter, r *http.Request) {
		dg, err := n.Submit(r.Context(), r.URL.Query().Get("topology"), r.Body)
		if err == nil {
			w.Header().Set("X-Digest", dg.String())
		}
		reply(w, err)
	})
	mux.HandleFunc("POST /assign", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		reply(w, n.WriteAssignment(r.Context(), q.Get("topology"), []byte(q.Get("value"))))
	})
	mux.HandleFunc("POST /wait-leading", func(w http.ResponseWriter, r *http.Request) {
		for {
			ch := n.Candidate().Changed()
			if n.Candidate().Current() != nil {
				reply(w, nil)
				return
			}
			select {
			case <-ch:
			case <-r.Context().Done():
				reply(w, r.Context().Err())
				return
			}
		}
	})
	mux.HandleFunc("POST /stale-write", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		l := last
		mu.Unlock()
		if l == nil {
			http.Error(w, "never led", http.StatusPreconditionFailed)
			return
		}
		q := r.URL.Query()
		_, err := l.Write(r.Context(), clientv3.OpPut(q.Get("key"), q.Get("value")))
		reply(w, err)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Error("control listener", "err", err)
		return 1
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Printf("control http://%s\n", ln.Addr())
	os.Stdout.Sync()
	err = n.Run(ctx)
	srv.Close()
	if !errors.Is(err, context.Canceled) {
		log.Error("nimbus run", "err", err)
		return 1
	}
	return 0
}
