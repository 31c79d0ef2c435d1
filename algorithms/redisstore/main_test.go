package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// One redis-server is shared by the tests of this package (each uses its
// own key prefix); tests that kill or restart Redis start their own.
var prefixSeq atomic.Int64

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.StopShared()
	if clusterSrv != nil {
		clusterSrv.Stop()
	}
	if clusterDir != "" {
		_ = os.RemoveAll(clusterDir)
	}
	os.Exit(code)
}

// sharedServer returns the package's redis-server (redistest.Shared).
func sharedServer(t testing.TB) *redistest.Server { return redistest.Shared(t) }

// newClient returns a client of the shared server with go-redis's default
// options, closed at the end of t. On it a store runs every call that may
// be cancelled (every call: DefaultTimeout) on a goroutine of its own, so
// as to return at the deadline (store.go, guard).
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	return newClientOf(t, sharedServer(t).Addr, false)
}

// newBoundClient is newClient with ContextTimeoutEnabled: the client
// bounds its I/O by the context, so a store on it calls Redis on the
// caller's goroutine. The tests that replay long traces and whose subject
// is not that goroutine use it (or noFunctionsBoundClient,
// sharedBoundCluster): under the race detector that goroutine cost
// TestConformanceScript a fifth of its CPU time, redis-server's included
// (26 s against 21 s), TestConformanceTwoInstances 15 % (16 s, 13.5 s).
// TestConformance runs the whole suite on newClient, and the tests of the
// goroutine itself (deadlines, abandoned calls, Close, panics) use
// newClient, sharedCluster or clients of their own with go-redis's
// default options.
func newBoundClient(t testing.TB) *redis.Client {
	t.Helper()
	return newClientOf(t, sharedServer(t).Addr, true)
}

// newClientOf returns a client of addr, bounding its I/O by the context
// with ctxTimeouts (ContextTimeoutEnabled), closed at the end of t.
func newClientOf(t testing.TB, addr string, ctxTimeouts bool) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: ctxTimeouts})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// uniquePrefix returns a key prefix no other test uses.
func uniquePrefix(t testing.TB) string {
	return fmt.Sprintf("t%d", prefixSeq.Add(1))
}

// noFunctionsClient returns a client of the shared server, closed at the
// end of t, as a user that may do anything but load or call functions: a
// store on it runs the script fallback (EVALSHA).
func noFunctionsClient(t testing.TB) *redis.Client {
	t.Helper()
	return noFunctionsClientOf(t, false)
}

// noFunctionsBoundClient is noFunctionsClient with ContextTimeoutEnabled
// (see newBoundClient).
func noFunctionsBoundClient(t testing.TB) *redis.Client {
	t.Helper()
	return noFunctionsClientOf(t, true)
}

func noFunctionsClientOf(t testing.TB, ctxTimeouts bool) *redis.Client {
	t.Helper()
	srv := sharedServer(t)
	admin := newClient(t)
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro").Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "nofunctions", Password: "any", ContextTimeoutEnabled: ctxTimeouts})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// slowMachineTimeout is the WithTimeout of a store whose timeout is not
// what its test is about: a failure bound for calls that must decide,
// generous enough for a loaded machine under -race. A CI run of every
// package at once, on 2 CPUs at a load of 10-15, timed out healthy
// cross-slot Takes at the default 2s (TestClusterConcurrentCrossSlotTakes,
// TestClusterReservationReplyLostIsSentAgain) and at a test's 500ms
// (TestClusterFailover's Takes before the failover).
const slowMachineTimeout = 30 * time.Second

// warmUp makes one Take of c through client with a store of no timeout
// (WithTimeout(0), not the default): it loads the store's library on the
// server and opens a connection of client, so that a store made next on client calls Redis in one round
// trip. A store's first call loads the library (FCALL, FUNCTION LOAD,
// FCALL again, about 120 kB of Lua to compile), which on a loaded machine
// outlasts a short WithTimeout (100ms) meant for the calls a test times.
func warmUp(t testing.TB, client redis.UniversalClient, c algorithms.Check) {
	t.Helper()
	warm, err := redisstore.New(client, redisstore.WithTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	if _, err := warm.Take(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}
