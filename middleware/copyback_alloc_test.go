package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAllocationsCopyBack: giving the caller's request what the handler
// set on the middleware's copy of it (see
// TestTheCallerSeesWhatNextSetOnTheRequest) costs comparisons, no
// allocation: through an http.ServeMux whose route has no wildcard the
// middleware still costs one allocation per request. A route with
// wildcards has path values to give, which net/http's SetPathValue keeps
// in a map of the caller's request: that map is the only allocation the
// give-back adds, reported here.
func TestAllocationsCopyBack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts (sync.Pool drops items)")
	}
	store, _ := newStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	for _, c := range []struct{ method, pattern string }{
		{"GET", "GET /items/7"},
		{"POST", "POST /items/{id}"},
	} {
		mux := http.NewServeMux()
		mux.Handle(c.pattern, ok)
		h := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.Per("p", 1_000_000, time.Minute, ip))}).Handler(mux)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, "/items/7", nil)) // the store's first sight of the key allocates
		r := httptest.NewRequest(c.method, "/items/7", nil)
		// A fresh copy of r each time: a request given path values once
		// keeps their map.
		per := func(h http.Handler) float64 {
			return testing.AllocsPerRun(200, func() { r2 := *r; h.ServeHTTP(httptest.NewRecorder(), &r2) })
		}
		bare, got := per(mux), per(h)
		if c.method == "GET" && got > bare+1 {
			t.Errorf("%s: %v allocations per request, want at most %v (the bare mux + 1)", c.pattern, got, bare+1)
		}
		t.Logf("%s: the bare mux %v allocations per request, with the middleware %v", c.pattern, bare, got)
	}
}
