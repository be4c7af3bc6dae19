// Package httpguard hardens the HTTP servers of squall (the monitor, the
// nimbus, the supervisor's log server): a server with every timeout and
// header budget set, and composable middleware that refuses what a
// server must not serve, each refusal answered with a clear status,
// logged and counted.
//
// # The server
//
// NewServer builds an *http.Server from a ServerConfig whose zero value
// sets every budget net/http leaves unlimited:
//
//	ReadHeaderTimeout  10 s    the request line and headers
//	ReadTimeout        1 min   the whole request, body included
//	WriteTimeout       1 min   from the end of the headers to the end of the answer
//	IdleTimeout        2 min   a keep-alive connection between requests
//	MaxHeaderBytes     64 KiB  the request line and headers
//
// A route that legitimately takes longer (an artifact upload or download,
// a CPU profile, a kill that waits for batches in flight) moves its own
// connection's deadlines from inside its handler with Extend or the
// Guard.Deadlines middleware (http.ResponseController under the hood);
// every other route keeps the short defaults. LimitListener bounds the
// connections a listener holds open at once; at the limit it closes a
// keep-alive connection waiting between requests (wire its ConnState into
// the server), so idle connections cannot lock callers out.
//
// # The middleware
//
// A Guard (New) owns what refusals share: the server's name, the logger
// and the Refusals counts. Its methods return Middleware, applied in the
// order given to Chain (the first one runs first):
//
//	Hosts          the Host header names this server (DNS rebinding)      421
//	CrossOrigin    non-safe browser requests from other origins (CSRF)    403
//	Authenticate   establishes the request's Identity                     401
//	Require        a Policy over the Identity (AnyIdentity, Roles, ...)   401 / 403
//	MaxBytes       request bodies larger than a budget                    413
//	Concurrency    more requests in a group than a budget                 503 + Retry-After
//
// A server typically applies Hosts, CrossOrigin, Authenticate and
// MaxBytes to everything, then Require per route (reads need any
// identity, mutations and profiles a role), and Concurrency around its
// expensive routes (uploads).
//
// # Identities
//
// An Identity is a role and a name. Authenticators turn a request's
// credentials into one: PeerCertificate reads the verified chain of a
// mutual-TLS connection (the certificate carries the identity; the
// mapping is injected, so this package knows nothing of the cluster's
// PKI), BearerToken compares a bearer token in constant time, FirstOf
// tries several. Authenticate refuses with 401 a request without a valid
// identity, with one exception the server must opt into
// (AuthConfig.PlainLoopback): a request that carries no credentials,
// over plain HTTP, from a loopback address, goes on as the Anonymous
// identity, whom policies may then admit or not. Presented credentials
// that are wrong are refused even then.
//
// # Refusals
//
// Every refusal is logged at Warn by the Guard's logger (who: the
// identity or the remote address; what: method and path; why) and counted
// by Reason in the Guard's Refusals, which a metrics layer reads with
// Counts or exports with Collector as squall_http_refused_total{server,
// reason}.
package httpguard
