package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// twoInstances is one Store made of two instances of the Redis store,
// each with its own client, under one prefix: its calls alternate between
// them, as a load balancer sends a client's requests to two app hosts.
type twoInstances struct {
	s [2]*redisstore.Store
	n *atomic.Uint64
}

func (t twoInstances) next() *redisstore.Store { return t.s[t.n.Add(1)%2] }

func (t twoInstances) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	return t.next().Take(ctx, checks...)
}

func (t twoInstances) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	return t.next().Refund(ctx, dst, checks, ds, waited)
}

// TestConformanceTwoInstances runs the whole algotest suite, unchanged,
// against two store instances on two clients sharing one prefix, every
// call (and refund) going to the other instance than the last: the seed
// examples, the model traces, the concurrency tests (ConcurrentPhases:
// 64 goroutines over both instances, instant after instant) and the
// refunds all decide as one store does.
func TestConformanceTwoInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: the whole conformance suite again, over two instances (TestConformance runs it on one); run without -short")
	}
	c1, c2 := newBoundClient(t), newBoundClient(t)
	algotest.Run(t, algotest.Harness{
		New: func(t *testing.T, clock algorithms.Clock) algorithms.Store {
			p := uniquePrefix(t)
			var s [2]*redisstore.Store
			for i, c := range []*redis.Client{c1, c2} {
				st, err := redisstore.New(c, redisstore.WithClock(clock), redisstore.WithPrefix(p))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = st.Close() })
				s[i] = st
			}
			return twoInstances{s, new(atomic.Uint64)}
		},
	})
}
