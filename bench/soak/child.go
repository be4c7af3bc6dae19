package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// progress is what a progress line of "roompresence run" says.
type progress struct {
	committed uint64
	lag       int64
	crashes   int
	seq       int       // how many progress lines came before, this one included
	at        time.Time // when the soak read it
	fedAt     int64     // records the soak had fed when it read it
}

// progressLine matches run's progress line:
// "run:     1234 events/s  committed txid 17     lag 0        dead letters 0     crashes 0".
var progressLine = regexp.MustCompile(`^run:\s+\d+ events/s\s+committed txid (\d+)\s+lag (-?\d+)\s+dead letters \d+\s+crashes (\d+)`)

// runLine is one stderr line of "roompresence run", classified.
type runLine struct {
	monitorURL string    // "run: monitor (...) on URL"
	progress   *progress // a progress line
	injected   bool      // "run: injected ..."
}

// parseRunLine classifies a stderr line of "roompresence run".
func parseRunLine(line string) runLine {
	if rest, ok := strings.CutPrefix(line, "run: monitor "); ok {
		if i := strings.LastIndex(rest, " on "); i >= 0 {
			return runLine{monitorURL: strings.TrimSpace(rest[i+len(" on "):])}
		}
	}
	if strings.HasPrefix(line, "run: injected ") {
		return runLine{injected: true}
	}
	m := progressLine.FindStringSubmatch(line)
	if m == nil {
		return runLine{}
	}
	committed, err1 := strconv.ParseUint(m[1], 10, 64)
	lag, err2 := strconv.ParseInt(m[2], 10, 64)
	crashes, err3 := strconv.Atoi(m[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		return runLine{}
	}
	return runLine{progress: &progress{committed: committed, lag: lag, crashes: crashes}}
}

// child is one "roompresence run" process. Its stderr goes to a log
// file; the soak reads the monitor's address, the progress lines and
// the injected faults from it.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited
	err  error         // its exit, once done is closed

	mu       sync.Mutex
	url      string
	last     progress
	injected int
	urlSet   chan struct{}
	fed      func() int64 // records fed so far, noted on each progress line
}

// startChild starts bin with args, logging its stderr to logPath; fed
// tells how many records the soak has fed (nil: none).
func startChild(bin string, args []string, logPath string, fed func() int64) (*child, error) {
	if fed == nil {
		fed = func() int64 { return 0 }
	}
	cmd := exec.Command(bin, args...)
	// The embedded store and the soak's broker, whatever the
	// environment names.
	cmd.Env = append(os.Environ(), "SQUALL_KAFKA_BROKERS=", "SQUALL_CASSANDRA_HOSTS=")
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout = logFile
	c := &child{cmd: cmd, done: make(chan struct{}), urlSet: make(chan struct{}), fed: fed}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("soak: starting %s: %w", bin, err)
	}
	go c.read(out, logFile)
	return c, nil
}

// read copies the child's stderr to the log and follows it, until the
// child exits; it owns logFile.
func (c *child) read(out io.Reader, logFile *os.File) {
	defer close(c.done)
	defer logFile.Close()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(logFile, line)
		l := parseRunLine(line)
		c.mu.Lock()
		switch {
		case l.monitorURL != "" && c.url == "":
			c.url = l.monitorURL
			close(c.urlSet)
		case l.injected:
			c.injected++
		case l.progress != nil:
			p := *l.progress
			p.seq, p.at, p.fedAt = c.last.seq+1, time.Now(), c.fed()
			c.last = p
		}
		c.mu.Unlock()
	}
	_, _ = io.Copy(logFile, out) // a line too long for the scanner
	c.err = c.cmd.Wait()
}

// monitorURL waits for the monitor's address.
func (c *child) monitorURL(ctx context.Context) (string, error) {
	select {
	case <-c.urlSet:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.url, nil
	case <-c.done:
		return "", fmt.Errorf("soak: the run exited before starting its monitor: %v", c.err)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// state returns the last progress line and the faults injected so far.
func (c *child) state() (progress, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.injected
}

// exited reports whether the process has exited.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop interrupts the process (run stops cleanly on SIGINT) and waits for
// it; after grace it kills it.
func (c *child) stop(grace time.Duration) error {
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("soak: the run did not stop within %v of SIGINT; killed", grace)
	}
	return c.err
}

// wait waits for the process to exit by itself.
func (c *child) wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-c.done
		return ctx.Err()
	}
}
