package middleware_test

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

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
