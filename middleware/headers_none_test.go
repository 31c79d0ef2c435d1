package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNoPolicyDecidedNoHeaders: a request for which every applicable
// policy was left out (policy.SkipPolicy: no key) was decided by no
// policy, so no profile writes a rate-limit field for it, not even an
// empty one.
func TestNoPolicyDecidedNoHeaders(t *testing.T) {
	for _, p := range []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy, middleware.LegacyUnix} {
		t.Run(p.String(), func(t *testing.T) {
			store, clock := newStore(t)
			perUser := fixed("per-user", 5, time.Minute, user, policy.OnKeyError(policy.SkipPolicy))
			m := middleware.MustNew(store, []*policy.Policy{perUser}, middleware.WithHeaders(p), middleware.WithClock(clock))
			mux := http.NewServeMux()
			mux.Handle("/", m.Handler(ok))
			w := serve(mux, "GET", "/") // anonymous: per-user is skipped
			if w.Code != http.StatusOK {
				t.Fatalf("anonymous request: %d, want 200", w.Code)
			}
			for k, v := range w.Header() {
				if strings.Contains(strings.ToLower(k), "ratelimit") {
					t.Errorf("%s: %q, want no rate-limit field", k, v)
				}
			}
		})
	}
}
