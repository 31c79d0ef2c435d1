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

// rateLimitFields returns the rate-limit fields of h (RateLimit*,
// X-RateLimit-*).
func rateLimitFields(h http.Header) http.Header {
	got := http.Header{}
	for k, v := range h {
		if strings.Contains(strings.ToLower(k), "ratelimit") {
			got[k] = v
		}
	}
	return got
}

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
			if got := rateLimitFields(w.Header()); len(got) != 0 {
				t.Errorf("%v, want no rate-limit field", got)
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
			if got := rateLimitFields(w.Header()); w.Code != http.StatusOK || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%d %v, want 200 %v", w.Code, got, tc.want)
			}
		})
	}
}

// TestGiveBackLeavesSingleValuedHeaders: a give-back (the response does
// not count, policy.CountIf) revises only an IETF line; the single-valued
// profiles keep what they wrote, and NoHeaders writes nothing. The
// middlewares run WithoutContext, where NoHeaders keeps no header values
// at all.
func TestGiveBackLeavesSingleValuedHeaders(t *testing.T) {
	for _, tc := range []struct {
		p    middleware.Profile
		want http.Header
	}{
		{middleware.Draft7, http.Header{
			"Ratelimit":        {"limit=5, remaining=4, reset=60"},
			"Ratelimit-Policy": {"5;w=60"},
		}},
		{middleware.Legacy, http.Header{
			"X-Ratelimit-Limit":     {"5"},
			"X-Ratelimit-Remaining": {"4"},
			"X-Ratelimit-Reset":     {"60"},
		}},
		{middleware.NoHeaders, http.Header{}},
	} {
		t.Run(tc.p.String(), func(t *testing.T) {
			store, clock := newStore(t)
			login := fixed("login", 5, time.Minute, remote, policy.CountIf(policy.CountFailed))
			m := middleware.MustNew(store, []*policy.Policy{login}, middleware.WithHeaders(tc.p), middleware.WithClock(clock), middleware.WithoutContext())
			mux := http.NewServeMux()
			// The handler writes nothing: the give-back is made before
			// the headers go out.
			mux.Handle("/", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
			for i := range 2 { // the first was given back: the second sees the same
				w := serve(mux, "GET", "/")
				if got := rateLimitFields(w.Header()); w.Code != http.StatusOK || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("request %d: %d %v, want 200 %v", i, w.Code, got, tc.want)
				}
			}
		})
	}
}
