//go:build race

package algorithms_test

// manyChecks is the number of checks of the calls of
// TestManyChecksLinear: each takes milliseconds when it finds a key named
// twice in time linear in the checks, and seconds when it compares every
// pair of them (the race detector slows every step some tenfold: 10,000 checks, 50 million pairs).
const manyChecks = 10000
