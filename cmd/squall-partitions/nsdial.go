package main

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// nsDialer dials TCP connections from inside a network namespace
// (/run/netns/<name>), for the harness's own clients (its etcd watch, its
// Kafka offset reads) while the harness itself stays in the root
// namespace. A socket belongs to the namespace of the thread that creates
// it, so each dial runs on a goroutine locked to an OS thread that joins
// the namespace; the goroutine ends without unlocking, so the Go runtime
// discards that thread instead of reusing it elsewhere.
type nsDialer struct {
	path string // /run/netns/<name>
}

// DialContext dials addr ("host:port", or a URL such as
// "https://host:port") over network from inside the namespace.
func (d nsDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		addr = rest
	}
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		fd, err := unix.Open(d.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: fmt.Errorf("opening %s: %w", d.path, err)}
			return
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			ch <- result{err: fmt.Errorf("joining %s: %w", d.path, err)}
			return
		}
		var nd net.Dialer
		c, err := nd.DialContext(ctx, network, addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// grpcDial is DialContext in the signature of grpc.WithContextDialer.
func (d nsDialer) grpcDial(ctx context.Context, addr string) (net.Conn, error) {
	return d.DialContext(ctx, "tcp", addr)
}
