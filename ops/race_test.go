//go:build race

package ops_test

// raceEnabled reports whether the race detector is on: wall-clock budgets
// are scaled for it.
const raceEnabled = true
