package redisstore_test

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// One redis-server is shared by the benchmarks of this package (each uses
// its own key prefix), as in redisstore's own tests, whose helpers these
// are copies of (this module cannot import them).
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
	if sharedDir != "" {
		_ = os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// sharedServer returns the package's redis-server, starting it on first use;
// it skips or fails t as redistest.Require does when there is none.
func sharedServer(t testing.TB) *redistest.Server {
	t.Helper()
	redistest.Require(t)
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "redisstore-bench-")
		if sharedErr == nil {
			sharedSrv, sharedErr = redistest.Start(sharedDir)
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedSrv
}

// uniquePrefix returns a key prefix no other benchmark uses.
func uniquePrefix(t testing.TB) string {
	return fmt.Sprintf("t%d", prefixSeq.Add(1))
}
