package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// One redis-server is shared by the tests of this package (each uses its
// own key prefix); tests that kill or restart Redis start their own.
var (
	sharedOnce sync.Once
	sharedSrv  *redistest.Server
	sharedErr  error
	sharedDir  string
	prefixSeq  atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedSrv != nil {
		_ = sharedSrv.Stop()
	}
	if clusterSrv != nil {
		clusterSrv.Stop()
	}
	for _, d := range []string{sharedDir, clusterDir} {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
	os.Exit(code)
}

// sharedServer returns the package's redis-server, starting it on first use;
// it skips or fails t as redistest.Require does when there is none.
func sharedServer(t testing.TB) *redistest.Server {
	t.Helper()
	redistest.Require(t)
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "redisstore-test-")
		if sharedErr == nil {
			sharedSrv, sharedErr = redistest.Start(sharedDir)
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedSrv
}

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
