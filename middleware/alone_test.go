package middleware_test

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// aloneEnv names, in the environment of a process that runAlone starts,
// the test that process is to run.
const aloneEnv = "MIDDLEWARE_TEST_ALONE"

// runAlone reports whether the calling test runs in a process of its own,
// where no other test of the package has run. When it does not, runAlone
// runs the test again in such a process (the test binary, with only that
// test), logs that process's output, fails t when it failed, and returns
// false: the caller returns then.
//
// It is for a test that measures the whole process (the bytes it
// allocated): goroutines other tests leave behind (a go-redis pool's
// dialer retrying a stopped server, a store call outliving its request)
// allocate while it measures, as they moved the heap that redisstore's
// TestDenyCacheMemory read (f201c0c).
func runAlone(t *testing.T) bool {
	t.Helper()
	if os.Getenv(aloneEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), aloneEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("the process of its own:\n%s", out)
	if err != nil {
		t.Fatalf("the process of its own: %v", err)
	}
	return false
}
