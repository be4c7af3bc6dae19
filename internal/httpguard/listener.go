package httpguard

import (
	"net"
	"sync"
)

// LimitListener returns a listener that holds at most n connections of
// ln open at once: past n, Accept waits for one of them to close (new
// connections wait in the system's backlog). With IdleTimeout, idle
// keep-alive connections give their place back. Closing the listener
// ends a waiting Accept. It panics if n is not positive.
func LimitListener(ln net.Listener, n int) net.Listener {
	if n <= 0 {
		panic("httpguard: LimitListener of a non-positive budget")
	}
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
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
