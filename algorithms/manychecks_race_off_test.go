//go:build !race

package algorithms_test

// manyChecks is the number of checks of the calls of
// TestManyChecksLinear: each takes milliseconds when it finds a key named
// twice in time linear in the checks, and seconds when it compares every
// pair of them (450 million pairs).
const manyChecks = 30000
