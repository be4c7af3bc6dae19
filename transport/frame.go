package transport

import (
	"encoding/binary"
	"io"
	"slices"
)

// A frame is a 4-byte big-endian length L followed by a body of L bytes.
// The body is one msgpack array whose elements are the messages, each
// itself an array (see Message and the package comment):
//
//	tuple    [1, task, stream, source, [root, edge, root, edge …], [values …]]
//	init     [2, task, root, xor, spoutTask]
//	ack      [3, task, root, xor]
//	fail     [4, task, root]
//	reset    [5, task, root]
//	outcome  [6, task, root, status]
//
// The writer always uses an array32 header for the body, so a frame
// header has a fixed size and can be written after its messages were
// encoded; a reader accepts any array header.
const (
	lenPrefix   = 4
	frameHeader = lenPrefix + 5 // length prefix + array32 header
)

// putFrameHeader writes into h the header of a frame of count messages
// whose encodings take n bytes.
func putFrameHeader(h []byte, count, n int) {
	binary.BigEndian.PutUint32(h, uint32(n+frameHeader-lenPrefix))
	h[lenPrefix] = 0xdd
	binary.BigEndian.PutUint32(h[lenPrefix+1:], uint32(count))
}

// appendFrame appends msgs to b as one frame.
func appendFrame(e *encoder, b []byte, msgs []Message) ([]byte, error) {
	start := len(b)
	e.w.b, e.cost = append(b, make([]byte, frameHeader)...), costFrameBase
	for i := range msgs {
		if err := e.message(&msgs[i]); err != nil {
			b, e.w.b = e.w.b[:start], nil
			return b, err
		}
	}
	b, e.w.b = e.w.b, nil
	putFrameHeader(b[start:], len(msgs), len(b)-start-frameHeader)
	return b, nil
}

// readChunk is the first size a frame buffer grows to beyond its
// capacity; it doubles from there while the body arrives.
const readChunk = 64 << 10

// readFrame reads one frame from r into buf and returns its body. A
// length prefix above limit is refused before any of the body is read.
// buf grows while the body arrives, not to the length the prefix claims,
// so a peer that announces a large frame and stalls holds little memory.
func readFrame(r io.Reader, buf []byte, limit int) ([]byte, error) {
	var p [lenPrefix]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return buf, err
	}
	n := int(binary.BigEndian.Uint32(p[:]))
	if uint64(n) > uint64(limit) {
		return buf, &FrameError{Size: n, Reason: "above the maximum frame size", Err: ErrFrameTooLarge}
	}
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n, max(2*cap(buf), readChunk))-len(buf))
		}
		got, err := io.ReadFull(r, buf[len(buf):min(n, cap(buf))])
		buf = buf[:len(buf)+got]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}
