// Package storetest gives a test the stores it runs on: the in-memory
// store and a redisstore on a redis-server of the test's own (package
// redistest), each on the clock the test injects, so that one test body
// checks both alike.
package storetest

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// Names are the stores New makes, for t.Run.
var Names = []string{"memory", "redis"}

// New returns a new store of the given name ("memory" or "redis") reading
// clock, closed when t ends. "redis" starts a redis-server on a free port
// (redistest.New: skipped with the reason when there is no redis-server
// and RATEKEEPER_REQUIRE_REDIS is unset), its client bounding I/O by the
// context (go-redis's ContextTimeoutEnabled): the store calls Redis on the
// caller's goroutine, not on one of its own as on a client with go-redis's
// default options, a path the redisstore package's own tests cover.
func New(t testing.TB, name string, clock algorithms.Clock) algorithms.Store {
	t.Helper()
	switch name {
	case "memory":
		ms, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ms.Close() })
		return ms
	case "redis":
		rdb := redis.NewClient(&redis.Options{Addr: redistest.New(t).Addr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { rdb.Close() })
		rs, err := redisstore.New(rdb, redisstore.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	t.Fatalf("storetest: no store %q (want one of %q)", name, Names)
	return nil
}
