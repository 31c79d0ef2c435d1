package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRulesReviewChiPatternAtMountPoint pins ChiPattern at the path a
// sub-router is mounted at, without or with its trailing slash (/v1/x
// and /v1/x/ for r.Route("/v1/{ver}", ...)): chi registers those paths
// as stubs of the mount that hand the request to the sub-router, which
// routes it as "/", so the route is the sub-router's "/" route (or its
// "/*"), or none (404, 405) when it has none for the method. chi's own
// Find stops at the stub and answers the mount's pattern for every
// method; ChiPattern must answer what chi routes to.
func TestRulesReviewChiPatternAtMountPoint(t *testing.T) {
	routed := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Pattern", chi.RouteContext(r.Context()).RoutePattern())
	}
	r := chi.NewRouter()
	r.Route("/v1/{ver}", func(sr chi.Router) { sr.Get("/*", routed) })
	r.Route("/m", func(sr chi.Router) { sr.Get("/", routed) })
	inner := chi.NewRouter()
	inner.Post("/", routed)
	mid := chi.NewRouter()
	mid.Mount("/in", inner)
	r.Mount("/n", mid)
	r.Get("/d", routed)
	r.Route("/d", func(sr chi.Router) { sr.Put("/", routed) }) // the mount takes GET /d from r.Get
	r.Route("/e", func(sr chi.Router) { sr.Put("/", routed) })
	r.Get("/e", routed) // registered after the mount: GET /e is r's own route
	for _, q := range []struct{ method, path string }{
		{"GET", "/v1/x"}, {"GET", "/v1/x/"}, {"HEAD", "/v1/x"}, {"GET", "/v1/x/y"},
		{"GET", "/m"}, {"GET", "/m/"}, {"HEAD", "/m"}, {"POST", "/m"}, {"POST", "/m/"},
		{"POST", "/n/in"}, {"POST", "/n/in/"}, {"GET", "/n/in"},
		{"GET", "/d"}, {"PUT", "/d"}, {"POST", "/d"},
		{"GET", "/e"}, {"HEAD", "/e"}, {"PUT", "/e"}, {"PUT", "/e/"}, {"POST", "/e"},
	} {
		req := httptest.NewRequest(q.method, q.path, nil)
		got := policy.ChiPattern(r)(req)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if want := w.Header().Get("X-Pattern"); got != want {
			t.Errorf("ChiPattern(r) for %s %s = %q; chi routes it to %q (%d)", q.method, q.path, got, want, w.Code)
		}
	}
}
