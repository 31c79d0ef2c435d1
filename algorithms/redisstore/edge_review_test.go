package redisstore_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestEdgeTracesAgainstModel replays algotest.EdgeTrace for every spec of
// algotest.EdgeSpecs (limits up to MaxLimit, windows of 1 ms to 24 h that
// divide neither a second nor a day, 3600 sub-windows of 278 ns, the
// largest Burst and MaxDelay the bounds allow), with instants exactly at
// and one nanosecond before the model's RetryAfter, ResetAfter, NextAfter
// and Delay, on window boundaries and going back, from starts in 1700,
// 1969, at the epoch and in 2262, and requires every field of every
// decision to match the model. The specs take turns on the function
// library, the script fallback and the three-node cluster (where the
// three-check calls span slots: peek and reserve).
func TestEdgeTracesAgainstModel(t *testing.T) {
	clients := []struct {
		name string
		c    redis.UniversalClient
	}{{"functions", newClient(t)}, {"script", noFunctionsClient(t)}, {"cluster", sharedCluster(t)}}
	specs := algotest.EdgeSpecs()
	steps := 24
	if testing.Short() {
		steps = 8
	}
	for i, spec := range specs {
		cl := clients[i%len(clients)]
		other := specs[(i*7+3)%len(specs)]
		starts := algotest.EdgeStarts(spec.Window)
		tr := algotest.EdgeTrace(uint64(i), spec, other, starts[(i/3)%len(starts)], steps)
		clock := algotest.NewClock(tr.Start)
		s, err := redisstore.New(cl.c, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
		if err != nil {
			t.Fatal(err)
		}
		diff, err := algotest.CompareModel(t.Context(), s, clock, tr)
		if err != nil {
			t.Fatalf("%s: spec %d %v: %v", cl.name, i, spec, err)
		}
		if diff != "" {
			t.Fatalf("%s: spec %d %v (EdgeTrace(%d, ..., %d)):\n%s", cl.name, i, spec, i, steps, diff)
		}
	}
}
