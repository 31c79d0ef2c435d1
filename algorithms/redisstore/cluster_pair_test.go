package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// slotPair is the pair of checks the cross-slot failure tests split: a
// fixed_window of 10 an hour on x, in a slot of node 1, at cost 2, and
// on y, in a slot of node 0, the library loaded on every master (the
// clients the tests build cannot load it where their hooks fail calls).
type slotPair struct {
	shared *redis.ClusterClient
	x, y   string
	xSlot  int
	xc, yc algorithms.Check
}

// newSlotPair returns the pair of the shared cluster whose keys' tags
// start with xName and yName.
func newSlotPair(t *testing.T, xName, yName string) slotPair {
	t.Helper()
	shared := sharedCluster(t)
	x, xSlot := tagOnNode(t, shared, xName, 1)
	y, _ := tagOnNode(t, shared, yName, 0)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}
	cs := slotPair{shared: shared, x: x, y: y, xSlot: xSlot,
		xc: algorithms.Check{Spec: spec, Key: x, Cost: 2}, yc: algorithms.Check{Spec: spec, Key: y}}
	warmUp(t, shared, cs.xc)
	return cs
}

// keyOf returns the Redis key of tag k's check under prefix.
func (slotPair) keyOf(prefix, k string) string {
	return fmt.Sprintf("%s:{%s}:fw:10:3600000000000:0:0:0", prefix, k)
}
