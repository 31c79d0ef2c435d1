//go:build race

package redisstore

// raceEnabled: the race detector is on; sync.Pool then drops some of what
// is put back, so allocation counts vary from call to call.
const raceEnabled = true
