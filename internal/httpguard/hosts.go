package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Hosts returns the middleware that refuses (421 Misdirected Request) a
// request whose Host header does not name this server, the defence
// against DNS rebinding (a page of evil.example whose name now resolves
// to 127.0.0.1 still sends "Host: evil.example").
//
// The host of the header (its port ignored, case and a final dot too)
// must be one of:
//   - names: the DNS names and addresses clients reach the server by
//     (a port given with one is ignored);
//   - the IP address the request's connection arrived on (the
//     listener's own address, found in the request's context under
//     http.LocalAddrContextKey, which http.Server sets);
//   - a loopback name ("localhost", 127.0.0.1, [::1]; LoopbackHost),
//     when that connection arrived on a loopback address.
//
// A request without a Host header is refused too. A handler served
// outside an http.Server (no local address in its context) accepts the
// names alone.
func (g *Guard) Hosts(names ...string) Middleware {
	allowed := make(map[string]bool, len(names))
	for _, n := range names {
		allowed[canonicalHost(n)] = true
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host := canonicalHost(r.Host)
			if host == "" {
				g.refuse(w, r, ReasonHost, http.StatusMisdirectedRequest, "a Host header is required")
				return
			}
			if !allowed[host] && !localHost(r, host) {
				g.refuse(w, r, ReasonHost, http.StatusMisdirectedRequest,
					fmt.Sprintf("host %q is not a name of this server", host))
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// localHost reports whether host names the local end of r's connection:
// its IP, or a loopback name when that IP is loopback.
func localHost(r *http.Request, host string) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	local, err := netip.ParseAddrPort(la.String())
	if err != nil {
		return false
	}
	lip := local.Addr().Unmap().WithZone("")
	if ip, err := netip.ParseAddr(host); err == nil && ip.Unmap().WithZone("") == lip {
		return true
	}
	return lip.IsLoopback() && LoopbackHost(host)
}

// canonicalHost returns the host of a Host header or a configured name:
// without its port, brackets and final dot, in lower case.
func canonicalHost(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}
