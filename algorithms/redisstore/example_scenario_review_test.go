package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// TestExampleScenario runs Example's scenario (its comment says the package
// tests do) against the package's redis-server: two instances, each with
// its own client and store (same prefix, a circuit breaker, a deadline per
// Take: 5 s here, not the Example's 50 ms, which a loaded test machine can
// miss), take in turn from one sliding_window of 3 per minute;
// the limit is shared, so the fourth Take, whichever instance makes it, is
// denied, and each Take reports what is left of the shared limit.
func TestExampleScenario(t *testing.T) {
	srv := sharedServer(t)
	ctx := context.Background()
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 3, Window: time.Minute}
	prefix := uniquePrefix(t)
	var stores []*redisstore.Store
	for range 2 {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		defer client.Close()
		store, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithCircuitBreaker(5, 10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, store)
	}
	var out strings.Builder
	for i := range 4 {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		d, err := stores[i%2].Take(ctx, algorithms.Check{Spec: spec, Key: "user:42"})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "instance %d: allowed=%v remaining=%d\n", i%2, d[0].Allowed, d[0].Remaining)
	}
	want := "instance 0: allowed=true remaining=2\n" +
		"instance 1: allowed=true remaining=1\n" +
		"instance 0: allowed=true remaining=0\n" +
		"instance 1: allowed=false remaining=0\n"
	if out.String() != want {
		t.Fatalf("Example's scenario printed\n%s\nwant\n%s", out.String(), want)
	}
}
