package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/squallstream/squall/failure"
)

var (
	// ErrUnknownTopic is matched by the error of New when a topic to read,
	// or the dead-letter topic, does not exist.
	ErrUnknownTopic = errors.New("kafka: unknown topic")

	// ErrUnreachable is matched by the error of New when no broker
	// answers.
	ErrUnreachable = errors.New("kafka: no broker reachable")

	// ErrOutOfRange is matched by *OutOfRangeError.
	ErrOutOfRange = errors.New("kafka: offset out of range")

	// ErrClosed is returned by the spout's calls after Close.
	ErrClosed = errors.New("kafka: spout closed")
)

// OutOfRangeError says that a batch's start offset is no longer in a
// partition's log, usually because retention deleted records before the
// spout read them. It matches ErrOutOfRange; a replay of a stored batch
// whose records are gone also matches spout.ErrUnavailable.
type OutOfRangeError struct {
	Topic     string
	Partition int
	Offset    int64 // the offset the batch wanted to start at
	Earliest  int64 // the earliest offset in the log (-1 if unknown)
	End       int64 // the log end offset (-1 if unknown)
}

func (e *OutOfRangeError) Error() string {
	msg := fmt.Sprintf("kafka: topic %s partition %d: offset %d is out of range: the log holds [%d, %d)",
		e.Topic, e.Partition, e.Offset, e.Earliest, e.End)
	if e.Earliest > e.Offset {
		msg += fmt.Sprintf("; %d offsets were deleted before they were read", e.Earliest-e.Offset)
	}
	return msg
}

// Is makes the error match ErrOutOfRange.
func (e *OutOfRangeError) Is(target error) bool { return target == ErrOutOfRange }

// classify marks an error of a request to the brokers with the failure
// kind the runtime acts on: transient broker and network trouble (broker
// down, leader moving, timeouts) is retryable, so the batch is replayed;
// the rest (authorization, unknown topic, corrupt data) is reported, so
// operators see it while the batch is retried. reconnect reports whether
// the spout should drop its connections and cached metadata.
func classify(err error) (marked error, reconnect bool) {
	if err == nil {
		return nil, false
	}
	if errors.Is(err, context.Canceled) {
		return err, false // the runtime is stopping the task
	}
	if isAuthFailure(err) {
		return failure.Reported(err), false // reconnecting will not help
	}
	var kerr kafkago.Error
	if errors.As(err, &kerr) {
		switch {
		case kerr == kafkago.UnknownTopicOrPartition:
			return failure.Reported(err), true
		case kerr.Temporary():
			return failure.Retryable(err), true
		default:
			return failure.Reported(err), false
		}
	}
	var nerr net.Error
	if errors.As(err, &nerr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, net.ErrClosed) {
		return failure.Retryable(err), true
	}
	// kafka-go's own errors of a broken connection or missing metadata
	// (for example "no partition" while a leader moves) carry no type:
	// treat them as transient too.
	return failure.Retryable(err), true
}
