package redisstore_test

import (
	"os"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// harness makes each store of the suite on client, under its own key prefix.
func harness(client redis.UniversalClient) algotest.Harness {
	return algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			s, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
}

// shortTraces makes the conformance suite replay 3 of its random traces
// (algotest.TracesEnv) under -short, unless that variable is set.
func shortTraces(t *testing.T) {
	if testing.Short() && os.Getenv(algotest.TracesEnv) == "" {
		t.Setenv(algotest.TracesEnv, "3")
	}
}

// TestConformance runs the algorithms conformance suite, unchanged, against
// a real redis-server, each store under its own key prefix, on a client
// with go-redis's default options: every call runs on a goroutine of the
// store's (the DefaultTimeout guard), which the other runs of the suite,
// on clients bounding I/O by the context (newBoundClient), leave out.
func TestConformance(t *testing.T) {
	shortTraces(t)
	client := newClient(t)
	algotest.Run(t, harness(client))
}

// TestConformanceScript runs the suite on the script fallback (EVALSHA),
// for a user that may not use functions.
func TestConformanceScript(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the whole conformance suite again, on the script fallback (TestConformance runs it on functions); run without -short")
	}
	client := noFunctionsBoundClient(t)
	algotest.Run(t, harness(client))
}

// TestConformanceCluster runs the same suite on a real three-node Redis
// Cluster: its multi-check calls span slots, so they take the peek,
// reserve and undo path.
func TestConformanceCluster(t *testing.T) {
	shortTraces(t)
	client := sharedBoundCluster(t)
	algotest.Run(t, harness(client))
}
