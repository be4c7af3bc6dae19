package transport

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
)

// The handshake opens every connection, before any frame:
//
//	client -> server  magic "SQWT", version (1 byte), length (2 bytes),
//	                  msgpack ["hello", topology, client worker, expected server worker]
//	server -> client  magic "SQWT", version (1 byte), length (2 bytes),
//	                  msgpack ["ok", server worker, server incarnation]
//	                  or ["refused", server worker, reason]
//
// The incarnation (ServerConfig.Incarnation) is new for every Server: a
// client that reconnects compares it with the one its lost connection
// reached to tell a restarted peer from a connection that merely broke
// (Reconnect). A server of an earlier build sends "" there, which a
// client takes as unknown. The server refuses a client of another version, another topology, or
// that expects another worker; the client refuses a server that is not
// the worker it expects. A refused connection is closed by both sides.
// Frames flow from client to server only; the server sends nothing after
// its reply.
const (
	magic       = "SQWT"
	version     = 1
	maxHelloLen = 4 * maxIDBytes
)

const (
	helloWord   = "hello"
	okWord      = "ok"
	refusedWord = "refused"
)

// writeHello writes the magic, the version and the msgpack array of
// fields.
func writeHello(w io.Writer, fields ...string) error {
	body, err := msgpack.Marshal(fields)
	if err != nil {
		return err
	}
	if len(body) > maxHelloLen {
		return fmt.Errorf("handshake of %d bytes", len(body))
	}
	b := make([]byte, 0, len(magic)+3+len(body))
	b = append(b, magic...)
	b = append(b, version)
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	_, err = w.Write(append(b, body...))
	return err
}

// readHello reads what writeHello wrote: the peer's version and want
// fields. A wrong magic or length is an error; a wrong version is returned
// for the caller to refuse.
func readHello(r io.Reader, want int) (ver byte, fields []string, err error) {
	var h [len(magic) + 3]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	if string(h[:len(magic)]) != magic {
		return 0, nil, fmt.Errorf("not a squall worker: magic %q", h[:len(magic)])
	}
	n := int(binary.BigEndian.Uint16(h[len(magic)+1:]))
	if n > maxHelloLen {
		return 0, nil, fmt.Errorf("handshake of %d bytes", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, nil, err
	}
	ver = h[len(magic)]
	if ver != version {
		return ver, nil, nil
	}
	if err := msgpack.Unmarshal(body, &fields); err != nil {
		return ver, nil, fmt.Errorf("handshake body: %w", err)
	}
	if len(fields) != want {
		return ver, nil, fmt.Errorf("handshake of %d fields, want %d", len(fields), want)
	}
	return ver, fields, nil
}

// clientHandshake greets the server and reads its answer; it returns the
// incarnation the server announced.
func clientHandshake(rw io.ReadWriter, cfg *ClientConfig) (incarnation string, err error) {
	if err := writeHello(rw, helloWord, cfg.Topology, cfg.Worker, cfg.Peer); err != nil {
		return "", err
	}
	ver, f, err := readHello(rw, 3)
	if err != nil {
		return "", err
	}
	if ver != version {
		return "", &HandshakeError{Peer: cfg.Peer, Reason: fmt.Sprintf("server speaks version %d, this worker %d", ver, version)}
	}
	switch {
	case f[0] == refusedWord:
		return "", &HandshakeError{Peer: f[1], Remote: true, Reason: f[2]}
	case f[0] != okWord:
		return "", &HandshakeError{Peer: f[1], Reason: fmt.Sprintf("answer %q", f[0])}
	case f[1] != cfg.Peer:
		return "", &HandshakeError{Peer: f[1], Reason: fmt.Sprintf("expected worker %q at %s, found %q", cfg.Peer, cfg.Addr, f[1])}
	}
	return f[2], nil
}

// serverHandshake reads a client's greeting and accepts it, answering ok,
// or returns why it must be refused. The caller counts a refusal before
// sending it with refuse, so a refused peer never sees the answer before
// the server's statistics do.
func serverHandshake(rw io.ReadWriter, cfg *ServerConfig) (peer, reason string, err error) {
	ver, f, err := readHello(rw, 4)
	if err != nil {
		return "", "", err
	}
	switch {
	case ver != version:
		reason = fmt.Sprintf("client speaks version %d, this worker %d", ver, version)
	case f[0] != helloWord:
		reason = fmt.Sprintf("greeting %q", f[0])
	case f[1] != cfg.Topology:
		peer, reason = f[2], fmt.Sprintf("client runs topology %q, this worker %q", f[1], cfg.Topology)
	case f[3] != cfg.Worker:
		peer, reason = f[2], fmt.Sprintf("client expects worker %q, this is %q", f[3], cfg.Worker)
	case f[2] == "":
		reason = "client has no worker id"
	default:
		return f[2], "", writeHello(rw, okWord, cfg.Worker, cfg.Incarnation)
	}
	return peer, reason, nil
}

// refuse answers a refused greeting and returns the refusal as an error.
func refuse(w io.Writer, cfg *ServerConfig, peer, reason string) error {
	if err := writeHello(w, refusedWord, cfg.Worker, reason); err != nil {
		return err
	}
	return &HandshakeError{Peer: peer, Reason: reason}
}
