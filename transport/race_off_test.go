//go:build !race

package transport

// raceEnabled: the race detector changes what allocations take, so the
// tests that measure them skip.
const raceEnabled = false
