package redisstore_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestConformance runs the algorithms conformance suite, unchanged, against
// a real redis-server, each store under its own key prefix.
func TestConformance(t *testing.T) {
	client := newClient(t)
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			s, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	})
}

// TestConformanceScript runs the suite on the script fallback (EVALSHA),
// for a user that may not use functions.
func TestConformanceScript(t *testing.T) {
	client := noFunctionsClient(t)
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			s, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	})
}

// TestConformanceCluster runs the same suite on a real three-node Redis
// Cluster: its multi-check calls span slots, so they take the peek,
// reserve and undo path.
func TestConformanceCluster(t *testing.T) {
	client := sharedCluster(t)
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			s, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	})
}
