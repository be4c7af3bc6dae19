// Package monitor is the local operator surface of a squall process: a
// registry of the topologies running in it, a Prometheus collector that
// reads their figures at scrape time, and an HTTP server with health and
// readiness probes, build information, metrics, profiles, a JSON REST API
// under /api/v1, a log viewer and a small server-rendered web UI.
//
// It shows one process (one worker, or a single-process deployment); the
// cluster view of a nimbus comes with cluster mode.
//
//	reg := monitor.NewRegistry()
//	if err := reg.Add(running, monitor.Options{}); err != nil { ... }
//	srv, err := monitor.Start(reg, monitor.Config{Addr: "127.0.0.1:8080"})
//	if err != nil { ... }
//	defer srv.Close(ctx)
//	fmt.Println("monitor on", srv.URL())
//
// # What it reads
//
// Everything comes from the exported methods of the running topologies:
// Topology is the part both *topology.Running and *trident.Running have
// (counters per component, supervisor health, reported errors, pending
// trees, activation and stop); Batches, found by type assertion, is what
// a *trident.Running adds (committed txid, failed attempts, dead letters,
// quarantined values, batch latency, owner generation, halting). Kafka
// lag comes from an optional LagSource given with the topology. Every
// request and every scrape reads the figures as they are then; the only
// thing kept in the background are periodic snapshots of the cumulative
// counters (Registry.Sample, run by Start's server every 10 seconds), from
// which the windowed figures (the growth over the last 10 minutes, 3 hours
// and day) are computed. The layout of the topology graph, the
// windows and the log search (package internal/logfile, which also writes
// the rotated JSON log file the viewer reads) are pure functions with thin
// shells around them.
//
// # Security
//
// The server listens on 127.0.0.1 unless told otherwise; on any other
// address it refuses to start without Config.Token or
// Config.Authenticator. Every request passes the guards of package
// internal/httpguard: the Host header must name the server (DNS
// rebinding), non-safe cross-origin browser requests are refused
// (net/http.CrossOriginProtection), bodies are limited, and Start's
// server sets every timeout and serves at most MaxConns connections.
// Every route but the probes then needs an identity: the token (the
// admin role), one from the Authenticator (for example a client
// certificate over Config.TLS), or, for a loopback client of a loopback
// server over plain HTTP, the anonymous one. With a token or an
// Authenticator the actions, the profiles under /debug/pprof and the
// logs need the admin role. Refusals are logged and exported as
// squall_http_refused_total{server="monitor",reason}.
//
// docs/operations.md documents the endpoints, the JSON field names, the
// metrics and what is not exported yet.
package monitor
