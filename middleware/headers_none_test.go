package middleware_test

import (
	"net/http"
	"reflect"
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

// TestNestedOuterNoPolicyDecidedLeavesProfile: a middleware further out
// that decided no policy for the request (its only one skipped: no key)
// wrote no headers, so the middleware further in writes its own in its
// own profile, not in the outer one's, and with nothing to merge with.
func TestNestedOuterNoPolicyDecidedLeavesProfile(t *testing.T) {
	for _, tc := range []struct {
		outer, inner middleware.Profile
		want         http.Header
	}{
		{middleware.Legacy, middleware.IETF, http.Header{
			"Ratelimit-Policy": {`"per-ip";q=5;w=60`},
			"Ratelimit":        {`"per-ip";r=4;t=60`},
		}},
		{middleware.IETF, middleware.Draft6, http.Header{
			"Ratelimit-Policy":    {`5;w=60`},
			"Ratelimit-Limit":     {"5"},
			"Ratelimit-Remaining": {"4"},
			"Ratelimit-Reset":     {"60"},
		}},
	} {
		t.Run(tc.outer.String()+"/"+tc.inner.String(), func(t *testing.T) {
			store, clock := newStore(t)
			perUser := fixed("per-user", 5, time.Minute, user, policy.OnKeyError(policy.SkipPolicy))
			perIP := fixed("per-ip", 5, time.Minute, remote)
			outer := middleware.MustNew(store, []*policy.Policy{perUser}, middleware.WithHeaders(tc.outer), middleware.WithClock(clock))
			inner := middleware.MustNew(store, []*policy.Policy{perIP}, middleware.WithHeaders(tc.inner), middleware.WithClock(clock))
			mux := http.NewServeMux()
			mux.Handle("/", outer.Handler(inner.Handler(ok)))
			w := serve(mux, "GET", "/") // anonymous: per-user is skipped
			got := http.Header{}
			for k, v := range w.Header() {
				if strings.Contains(strings.ToLower(k), "ratelimit") {
					got[k] = v
				}
			}
			if w.Code != http.StatusOK || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%d %v, want 200 %v", w.Code, got, tc.want)
			}
		})
	}
}
