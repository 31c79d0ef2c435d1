package middleware_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSingleValuedResetIsFullRestore is the example of the Draft7 doc: a
// per-second sliding window counter given ten requests in one second and
// one 0.6 s into the next answers that one r=5;t=1 under IETF (t: until
// Remaining next grows) and reset=2 under the single-valued profiles
// (until the allowance is back in full, the last request counted).
func TestSingleValuedResetIsFullRestore(t *testing.T) {
	for _, tc := range []struct {
		p            middleware.Profile
		field, value string
	}{
		{middleware.IETF, "RateLimit", `"per-second";r=5;t=1`},
		{middleware.Draft7, "RateLimit", "limit=10, remaining=5, reset=2"},
		{middleware.Draft6, "RateLimit-Reset", "2"},
		{middleware.Legacy, "X-RateLimit-Reset", "2"},
	} {
		store, clock := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerSecond("per-second", 10, user))}, middleware.WithHeaders(tc.p))
		h := m.Handler(ok)
		for range 10 {
			serve(h, "GET", "/", "X-User", "ann")
		}
		clock.Advance(1600 * time.Millisecond)
		w := serve(h, "GET", "/", "X-User", "ann")
		if got := w.Header().Get(tc.field); w.Code != 200 || got != tc.value {
			t.Errorf("%v: %d, %s %q; want 200, %q", tc.p, w.Code, tc.field, got, tc.value)
		}
	}
}
