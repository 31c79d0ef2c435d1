package redisstore_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// One redis-server is shared by the benchmarks of this package
// (redistest.Shared; each uses its own key prefix), as in redisstore's own
// tests.
var prefixSeq atomic.Int64

func TestMain(m *testing.M) {
	code := m.Run()
	redistest.StopShared()
	os.Exit(code)
}

// sharedServer returns the package's redis-server (redistest.Shared).
func sharedServer(t testing.TB) *redistest.Server { return redistest.Shared(t) }

// uniquePrefix returns a key prefix no other benchmark uses.
func uniquePrefix(t testing.TB) string {
	return fmt.Sprintf("t%d", prefixSeq.Add(1))
}
