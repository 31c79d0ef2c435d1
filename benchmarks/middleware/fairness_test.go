package middleware_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/didip/tollbooth/v7"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/benchmarks/internal/peercheck"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestOnePolicyHasThePeersQuota checks that the one-policy middleware
// limits the same quota as the peers beside it in BenchmarkMiddleware:
// MaxLimit per peerWindow, keyed by the client IP.
func TestOnePolicyHasThePeersQuota(t *testing.T) {
	h := benchMiddleware(t, 1)
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "203.0.113.9:41234"
	w := newBenchWriter()
	h.ServeHTTP(w, r)
	got := w.Header().Get(middleware.HeaderRateLimitPolicy)
	want := "w=" + strconv.Itoa(int(peerWindow.Seconds()))
	if w.code != 200 || !strings.Contains(got, want) || !strings.Contains(got, "q=1000000000") {
		t.Fatalf("one policy: status %d, %s %q; want 200 and the peers' quota (q=1000000000, %s)", w.code, middleware.HeaderRateLimitPolicy, got, want)
	}
}

// TestThrottledStoreIsBounded checks that throttled runs as its
// documentation sets it up, with a bounded memstore: memstore.NewCtx(0),
// which this harness used, never evicts, and a bound evicts the least
// recently used key.
func TestThrottledStoreIsBounded(t *testing.T) {
	peercheck.ThrottledBound(t, throttledStore(t), throttledMaxKeys)
}

// TestTollboothHasThePeersQuotaAndKey checks that tollbooth limits what
// the others limit: the quota per peerWindow (a burst of limit, nothing
// more at once), keyed by the client IP alone. tollbooth keys by the IP
// and the URL path by default, so that a client's requests to two paths
// were counted apart, and it was given the quota per second.
func TestTollboothHasThePeersQuotaAndKey(t *testing.T) {
	lmt := tollboothLimiter(2)
	// A token bucket of 2 per peerWindow: filling at 2/peerWindow, burst 2.
	if got, want := lmt.GetMax(), 2/peerWindow.Seconds(); got != want || lmt.GetBurst() != 2 {
		t.Fatalf("tollbooth's bucket fills at %g per second with a burst of %d; want %g per second (2 per %s), burst 2", got, lmt.GetBurst(), want, peerWindow)
	}
	h := tollbooth.LimitHandler(lmt, benchHandler)
	serve := func(remote, path string) int {
		r := httptest.NewRequest("GET", path, nil)
		r.RemoteAddr = remote
		w := newBenchWriter()
		h.ServeHTTP(w, r)
		return w.code
	}
	for i, step := range []struct {
		remote, path string
		want         int
	}{
		{"203.0.113.9:41234", "/a", 200},
		{"203.0.113.9:41235", "/b", 200}, // another path, another port: the same client
		{"203.0.113.9:41234", "/c", 429}, // its quota of 2 is spent
		{"198.51.100.7:1234", "/a", 200}, // another client
	} {
		if got := serve(step.remote, step.path); got != step.want {
			t.Fatalf("request %d from %s to %s: status %d, want %d", i+1, step.remote, step.path, got, step.want)
		}
	}
}

// TestOurStoreIsBounded checks that our store in the benchmarks is bounded
// as throttled's is (TestThrottledStoreIsBounded): past benchMaxKeys keys
// it holds no more.
func TestOurStoreIsBounded(t *testing.T) {
	checkBounded(t, benchStore(t), benchMaxKeys)
}

// checkBounded takes one unit for each of a tenth more keys than max on
// st, under a limit no run reaches in a day, and checks that st holds at
// most max of them.
func checkBounded(t *testing.T, st *algorithms.MemoryStore, max int) {
	t.Helper()
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit, Window: 24 * time.Hour}}
	for i := range max + max/10 {
		c.Key = "k" + strconv.Itoa(i)
		if _, err := st.TakeOne(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.Len(); n > max {
		t.Fatalf("our store holds %d keys after %d, more than its bound of %d: unbounded", n, max+max/10, max)
	}
}
