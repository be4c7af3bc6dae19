package httpguard

import (
	"net"
	"net/http"
	"sync"
)

// Limited is a listener that holds at most a fixed number of connections
// open at once (LimitListener).
type Limited struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu     sync.Mutex
	idle   map[net.Conn]struct{} // keep-alive connections between requests (ConnState)
	idling chan struct{}         // a connection went idle (1 buffered)
}

// LimitListener returns a listener that holds at most n connections of
// ln open at once: past n, Accept first closes a keep-alive connection
// that waits between requests, if the server reports one (wire
// Limited.ConnState into http.Server.ConnState), and otherwise waits for
// a connection to close (new connections wait in the system's backlog).
// So n idle keep-alive connections cannot lock other callers out until
// their IdleTimeout. Closing the listener ends a waiting Accept. It
// panics if n is not positive.
func LimitListener(ln net.Listener, n int) *Limited {
	if n <= 0 {
		panic("httpguard: LimitListener of a non-positive budget")
	}
	return &Limited{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{}),
		idle: map[net.Conn]struct{}{}, idling: make(chan struct{}, 1)}
}

// ConnState tracks which connections wait between requests; set it as
// the http.Server's ConnState.
func (l *Limited) ConnState(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s == http.StateIdle {
		l.idle[c] = struct{}{}
		select {
		case l.idling <- struct{}{}:
		default:
		}
	} else {
		delete(l.idle, c)
	}
}

// Accept waits for a place and then for a connection.
func (l *Limited) Accept() (net.Conn, error) {
	if err := l.wait(); err != nil {
		return nil, err
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

// wait takes a place, closing an idle keep-alive connection to make one
// at the limit.
func (l *Limited) wait() error {
	if l.acquire() {
		return nil
	}
	for {
		select {
		case l.sem <- struct{}{}:
			return nil
		case <-l.idling: // at the limit, and a connection waits idle
			if l.acquire() {
				return nil
			}
			l.closeIdle()
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// acquire takes a place if one is free, without waiting.
func (l *Limited) acquire() bool {
	select {
	case l.sem <- struct{}{}:
		return true
	default:
		return false
	}
}

// closeIdle closes one connection that waits between requests, if any:
// its place goes to the next caller.
func (l *Limited) closeIdle() {
	l.mu.Lock()
	var victim net.Conn
	for c := range l.idle {
		victim = c
		delete(l.idle, c)
		break
	}
	l.mu.Unlock()
	if victim != nil {
		victim.Close()
	}
}

// Close closes the listener and ends a waiting Accept.
func (l *Limited) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
