// Package metrictest holds the scenarios that the tests of the metrics
// adapters (otelmetrics, prommetrics) share: each scenario builds the
// middleware, serves the requests and checks what the middleware
// answers, so that each adapter's test keeps only its own reading of its
// metrics.
package metrictest

import (
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// T0 is the instant the scenarios' clocks start at.
var T0 = time.Unix(1_700_000_040, 0)

// Remote keys a request by its RemoteAddr.
func Remote(r *http.Request) (string, error) { return r.RemoteAddr, nil }

// User keys a request by its X-User header; without one, the key is
// missing (keyfunc.ErrNoUser).
func User(r *http.Request) (string, error) {
	if u := r.Header.Get("X-User"); u != "" {
		return u, nil
	}
	return "", keyfunc.ErrNoUser
}

// A StepClock reads T0 plus 2ms at its first reading, and 2ms more at each
// after: each decision takes 2ms. Its zero value is ready to use.
type StepClock struct{ ns atomic.Int64 }

// Now advances the clock by 2ms and returns its new time.
func (c *StepClock) Now() time.Time {
	return T0.Add(time.Duration(c.ns.Add(int64(2 * time.Millisecond))))
}

// Fixed is a fixed_window policy named name of limit a minute, keyed by
// key.
func Fixed(name string, limit int64, key keyfunc.Func) *policy.Policy {
	return policy.Must(policy.New(name, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}, key))
}

// KeepAlive keeps m reachable until the test ends. A middleware given a
// SharedObserver (the Metrics, the Observer) is counted out of its gauges
// once the garbage collector finds it unreachable, as one dropped without
// Close; a test that reads the gauges after its last use of m would
// otherwise read them with or without m, as a collection happened or not.
func KeepAlive(t testing.TB, m *middleware.Middleware) {
	t.Cleanup(func() { runtime.KeepAlive(m) })
}

// AllocsNoMore reports whether f allocates no more per call than base,
// each measured with testing.AllocsPerRun(runs, ...), and returns the
// measures. It measures up to three times, and reports true at the first
// time f's measure is no more than base's: AllocsPerRun counts every
// goroutine's allocations, and while it runs the runtime may run the
// cleanups of the observers of middlewares an earlier test dropped (a
// Binding's, which allocate); under -race, sync.Pool drops what it is
// given at random, so a measure is not a whole number of allocations per
// call before AllocsPerRun rounds it down, and a few allocations of
// another goroutine can add one. An allocation f makes at every call adds
// one to every measure. Such noise can land in base's measure as well,
// where it would hide an allocation of f's: base is measured before and
// after f, and f compared with the lower of the two.
func AllocsNoMore(runs int, base, f func()) (baseAllocs, fAllocs float64, ok bool) {
	for range 3 {
		before := testing.AllocsPerRun(runs, base)
		fAllocs = testing.AllocsPerRun(runs, f)
		baseAllocs = min(before, testing.AllocsPerRun(runs, base))
		if fAllocs <= baseAllocs {
			return baseAllocs, fAllocs, true
		}
	}
	return baseAllocs, fAllocs, false
}

// ErrLines fails t unless err has n lines, the i-th holding want[i].
func ErrLines(t *testing.T, err error, n int, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d lines", n)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != n {
		t.Fatalf("error of %d lines, want %d:\n%v", len(lines), n, err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %q, want it to hold %q", i+1, lines[i], w)
		}
	}
}
