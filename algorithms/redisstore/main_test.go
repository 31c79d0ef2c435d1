package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

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

// newClient returns a client of the shared server, closed at the end of t.
func newClient(t testing.TB) *redis.Client {
	t.Helper()
	srv := sharedServer(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
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
	srv := sharedServer(t)
	admin := newClient(t)
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "nofunctions", "on", "nopass", "~*", "&*", "+@all", "-function", "-fcall", "-fcall_ro").Err(); err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "nofunctions", Password: "any"})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
