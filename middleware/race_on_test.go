//go:build race

package middleware_test

// raceEnabled reports whether the race detector is on (it makes sync.Pool
// drop items, so allocation counts differ).
const raceEnabled = true
