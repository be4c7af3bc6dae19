// Package memory holds benchmarks of how squall's memory grows with state
// size and in-flight work (issue 26): the heap held per key cached in
// front of an opaque map and per tuple held by an open window. Each
// reports bytes per item as a custom metric (b.ReportMetric); run them
// with
//
//	go test -run '^$' -bench . -benchtime 3x ./bench/memory/
//
// The heap bytes per pending tree of the acker are acker's own
// BenchmarkAckerPendingMemory.
package memory
