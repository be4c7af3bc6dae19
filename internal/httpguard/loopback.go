package httpguard

import (
	"net"
	"net/netip"
	"strings"
)

// LoopbackHost reports whether host names the loopback interface: a
// loopback IP (127.0.0.0/8, ::1, or either mapped or with a zone) or the
// name "localhost" (in any case, with or without a final dot). Square
// brackets around an IPv6 address are allowed.
func LoopbackHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// LoopbackAddr reports whether the host of addr ("host:port", as in a
// listener's address or a request's RemoteAddr) names the loopback
// interface (LoopbackHost). An address without a port, or with an empty
// host (every interface), is not loopback.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && LoopbackHost(host)
}
