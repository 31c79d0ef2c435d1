package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedBucketLoweredDraftLimitListed: a token_bucket of 5 a minute
// in two nested middlewares, lowered to 3 further in (SetLimit or a
// reload) after two requests: the copy further in decides the third
// under its 3, its guard (the 5, counted further out) merged in, and its
// member "3;w=60" replaces the 5's in the draft -06/-07 RateLimit-Policy
// list. Both hold 2 more requests; the 5's reset (3 tokens to come back)
// is the longer, so the single values were the outer ones, "limit=5",
// naming a quota the list no longer held (88 traces of
// TestNestedTokenBucketHeadersNeverClaimMore failed so). The values must
// name a listed member and report the 2 left.
func TestNestedBucketLoweredDraftLimitListed(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, how := range []string{"SetLimit", "reload"} {
			for _, prof := range []middleware.Profile{middleware.Draft7, middleware.Draft6} {
				t.Run(mux+"/"+how+"/"+prof.String(), func(t *testing.T) {
					h, _, w := loweredBucketThird(t, mux, how, prof)
					list := strings.Join(w.Header().Values("RateLimit-Policy"), ", ")
					limit, remaining := w.Header().Get("RateLimit-Limit"), w.Header().Get("RateLimit-Remaining")
					if prof == middleware.Draft7 {
						limit, remaining, _ = strings.Cut(strings.TrimPrefix(w.Header().Get("RateLimit"), "limit="), ", remaining=")
						remaining, _, _ = strings.Cut(remaining, ",")
					}
					if w.Code != http.StatusOK || remaining != "2" || !hasListMember(list, limit+";w=60") {
						t.Errorf("third request: %d, limit %q, remaining %q, RateLimit-Policy %q; want 200, 2 left, the limit a listed member (%v)",
							w.Code, limit, remaining, list, w.Header())
					}
					if got := admittedOf(h, 5); got != 2 {
						t.Errorf("then %d admitted, want 2", got)
					}
				})
			}
		}
	}
}

// loweredBucketThird builds the shape of TestNestedBucketLoweredDraftLimitListed
// under profile prof through router mux (chi or ServeMux): two nested
// middlewares, each with a token_bucket "p" of 5 a minute, two requests,
// then the copy further in lowered to 3 (how: SetLimit, or a reload by
// SetPolicies). It returns the handler, the middlewares' clock and the
// third request's response.
func loweredBucketThird(t *testing.T, mux, how string, prof middleware.Profile) (http.Handler, *algotest.Clock, *httptest.ResponseRecorder) {
	t.Helper()
	store, clock := newStore(t)
	bucket := func(limit int64) *policy.Policy {
		return policy.Must(policy.New("p", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: limit, Window: time.Minute}, constKey))
	}
	var ms [2]*middleware.Middleware
	for i := range ms {
		ms[i] = middleware.MustNew(store, []*policy.Policy{bucket(5)}, middleware.WithClock(clock), middleware.WithHeaders(prof))
	}
	h := nestedRouter(mux, ms[0], ms[1])
	for range 2 {
		if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
			t.Fatalf("status %d", w.Code)
		}
	}
	if how == "SetLimit" {
		setLimit(t, ms[1], "p", 3)
	} else if err := ms[1].SetPolicies([]*policy.Policy{bucket(3)}); err != nil {
		t.Fatal(err)
	}
	return h, clock, serve(h, "GET", "/")
}
