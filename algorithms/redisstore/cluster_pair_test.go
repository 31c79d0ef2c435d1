package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
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

// clusterStoreOn returns a new client of the cluster at addrs (closed
// when the test ends) and a store on it under a prefix of its own, its
// clock fixed at algotest.Base, and the prefix: a store whose client the
// test may give hooks to without touching the shared cluster's.
func clusterStoreOn(t *testing.T, addrs []string) (*redis.ClusterClient, *redisstore.Store, string) {
	t.Helper()
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = client.Close() })
	prefix := uniquePrefix(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(algotest.Base)))
	if err != nil {
		t.Fatal(err)
	}
	return client, s, prefix
}

// keyOf returns the Redis key of tag k's check under prefix.
func (slotPair) keyOf(prefix, k string) string {
	return fmt.Sprintf("%s:{%s}:fw:10:3600000000000:0:0:0", prefix, k)
}
