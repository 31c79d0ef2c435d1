package redistest

import (
	"os"
	"sync"
	"testing"
)

// The process's shared server (see Shared).
var (
	sharedMu  sync.Mutex
	sharedSrv *Server
	sharedErr error
	sharedDir string
)

// Shared returns a redis-server shared by the tests of the process (each
// should use keys of its own, such as under a prefix of its own), started
// on first use in a temporary directory. It skips or fails tb as Require
// does when there is no redis-server, and fails it when the server cannot
// start. Call StopShared from TestMain once the tests have run. Tests that
// stop, restart or reconfigure Redis start their own (New).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	Require(tb)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv == nil && sharedErr == nil {
		sharedDir, sharedErr = os.MkdirTemp("", "redistest-shared-")
		if sharedErr == nil {
			sharedSrv, sharedErr = Start(sharedDir)
		}
	}
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return sharedSrv
}

// StopShared stops the server Shared started, if any, and removes its
// directory.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedSrv != nil {
		_ = sharedSrv.Stop()
	}
	if sharedDir != "" {
		_ = os.RemoveAll(sharedDir)
	}
	sharedSrv, sharedDir, sharedErr = nil, "", nil
}
