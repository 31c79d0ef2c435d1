package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedThreeSingleValuedLowestWins: three nested middlewares of a
// single-valued profile, each with one policy: the outer one has 1 left,
// the middle one 9, the inner one 4. The response must report the policy
// with the lowest remaining of all three (the outer one's 1). The middle
// one, whose values were not lower, left the outer one's in the header but
// counted as the one that wrote them; the inner one compared its 4 with
// the middle one's 9 and replaced the outer one's 1 with its 4.
func TestNestedThreeSingleValuedLowestWins(t *testing.T) {
	for _, profile := range []middleware.Profile{middleware.Draft6, middleware.Draft7, middleware.Legacy} {
		store, err := algorithms.NewMemoryStore()
		if err != nil {
			t.Fatal(err)
		}
		mw := func(name string, limit int64) *middleware.Middleware {
			p := policy.Must(policy.PerMinute(name, limit, keyfunc.Global(), policy.WithAlgorithm(algorithms.FixedWindow)))
			return middleware.MustNew(store, []*policy.Policy{p}, middleware.WithHeaders(profile))
		}
		outer, mid, inner := mw("outer", 2), mw("mid", 10), mw("inner", 5)
		h := outer.Handler(mid.Handler(inner.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		var limit, remaining string
		switch profile {
		case middleware.Draft6:
			limit, remaining = w.Header().Get("RateLimit-Limit"), w.Header().Get("RateLimit-Remaining")
		case middleware.Draft7:
			for _, f := range strings.Split(w.Header().Get("RateLimit"), ", ") {
				if v, ok := strings.CutPrefix(f, "limit="); ok {
					limit = v
				}
				if v, ok := strings.CutPrefix(f, "remaining="); ok {
					remaining = v
				}
			}
		case middleware.Legacy:
			limit, remaining = w.Header().Get("X-RateLimit-Limit"), w.Header().Get("X-RateLimit-Remaining")
		}
		if w.Code != http.StatusOK || limit != "2" || remaining != "1" {
			t.Errorf("profile %v: %d limit %q remaining %q, want 200 limit 2 remaining 1 (the outer policy's, the lowest)", profile, w.Code, limit, remaining)
		}
	}
}
