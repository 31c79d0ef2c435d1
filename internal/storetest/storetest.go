// Package storetest runs a test against each store of the module: the
// in-memory store, and the Redis store on a redis-server of its own
// (redistest), each reading an injected clock, so that a test shows the
// same behaviour on both.
package storetest

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// Each runs f as the subtests "memory" and "redis", each with a new store
// reading a new clock set at start (the one f is given), closed when the
// subtest ends. The Redis subtest skips, saying
// why, without a redis-server (or fails with RATEKEEPER_REQUIRE_REDIS
// set: see redistest.Require).
func Each(t *testing.T, start time.Time, f func(t *testing.T, store algorithms.Store, clock *algotest.Clock)) {
	t.Run("memory", func(t *testing.T) {
		clock := algotest.NewClock(start)
		ms, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ms.Close() })
		f(t, ms, clock)
	})
	t.Run("redis", func(t *testing.T) {
		clock := algotest.NewClock(start)
		rdb := redis.NewClient(&redis.Options{Addr: redistest.New(t).Addr})
		t.Cleanup(func() { rdb.Close() })
		rs, err := redisstore.New(rdb, redisstore.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		f(t, rs, clock)
	})
}
