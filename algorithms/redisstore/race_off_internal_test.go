//go:build !race

package redisstore

// raceEnabled: the race detector is off.
const raceEnabled = false
