package monitor_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/squallstream/squall/monitor"
	"github.com/squallstream/squall/transport"
)

// transportTopology is a fakeTopology with a worker's transport server.
type transportTopology struct {
	*fakeTopology
	srv *transport.Server
}

func (f transportTopology) TransportStats() (transport.ServerStats, bool) { return f.srv.Stats(), true }

// A connection the transport refuses shows in
// squall_transport_refused_total under its reason; every reason has a
// series from the start.
func TestTransportRefusalsExported(t *testing.T) {
	srv, err := transport.Listen(context.Background(), transport.ServerConfig{Topology: "wire", Worker: "w1",
		Logger:  slog.New(slog.DiscardHandler),
		Handler: transport.HandlerFunc(func(context.Context, string, transport.TaskID, []transport.Message) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	reg := monitor.NewRegistry()
	if err := reg.Add(transportTopology{&fakeTopology{name: "wire", done: make(chan struct{})}, srv}, monitor.Options{}); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, reg, monitor.Config{})
	fams := scrape(t, ts)
	for _, reason := range transport.Reasons() {
		if v := value(t, fams, "squall_transport_refused_total", map[string]string{"topology": "wire", "reason": reason}); v != 0 {
			t.Fatalf("%s: %v before any refusal", reason, v)
		}
	}

	conn, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET / HTTP/1.1\r\n\r\n")) // not a worker: refused at the handshake
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	io.Copy(io.Discard, conn) // the server counts a refusal before it closes
	conn.Close()
	fams = scrape(t, ts)
	if v := value(t, fams, "squall_transport_refused_total", map[string]string{"topology": "wire", "reason": transport.ReasonHandshake}); v != 1 {
		t.Fatalf("squall_transport_refused_total{reason=handshake} = %v, want 1", v)
	}
}
