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

// TestRulesReviewChiPatternSubRouterEmptyCatchAll pins ChiPattern(sub)
// asked in the sub-router's r.Use, before it routes, when its route is
// the mount's own pattern ("/files/*" mounted at "/files", "/a/*" at
// "/a") and its catch-all holds nothing (/files/files/): chi's Mount
// empties the mount's "*" before the sub-router routes, so that the
// request's patterns and parameters then look like those of a request
// the sub-router has routed already. Asked after routing (a middleware of
// the sub-router's Group), it answers the same.
func TestRulesReviewChiPatternSubRouterEmptyCatchAll(t *testing.T) {
	for _, c := range []struct{ mount, route, path string }{
		{"/a", "/a/*", "/a/a/"},
		{"/a", "/a/*", "/a/a/b"},
		{"/files", "/files/*", "/files/files/"},
		{"/x", "/*", "/x/"},
		{"/x", "/*", "/x/y"},
	} {
		var before, after string
		sub := chi.NewRouter()
		sub.Use(func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				before = policy.ChiPattern(sub)(r)
				h.ServeHTTP(w, r)
			})
		})
		sub.Group(func(g chi.Router) {
			g.Use(func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					after = policy.ChiPattern(sub)(r)
					h.ServeHTTP(w, r)
				})
			})
			g.Delete(c.route, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Pattern", chi.RouteContext(r.Context()).RoutePattern())
			})
		})
		top := chi.NewRouter()
		top.Mount(c.mount, sub)
		w := httptest.NewRecorder()
		top.ServeHTTP(w, httptest.NewRequest("DELETE", c.path, nil))
		want := w.Header().Get("X-Pattern")
		if before != want || after != want {
			t.Errorf("sub-router %q mounted at %q, DELETE %s: ChiPattern(sub) before routing %q, after %q; chi routes it to %q (%d)", c.route, c.mount, c.path, before, after, want, w.Code)
		}
	}
}

// TestRulesReviewChiPatternSubRouterAtNestedMount pins ChiPattern(sub)
// in the r.Use of a sub-router mounted at "/a" that mounts another at
// "/a" in turn: a request for /a is the outer sub-router's "/" (chi's
// Mount stub hands it over as "/"), which the context's patterns ("/a",
// the stub's) do not tell from the inner mount's stub for /a, the path
// the sub-router routes from its root.
func TestRulesReviewChiPatternSubRouterAtNestedMount(t *testing.T) {
	for _, q := range []struct{ method, path string }{
		{"HEAD", "/a"}, {"POST", "/a"}, {"GET", "/a"}, {"GET", "/a/"}, {"GET", "/a/a"}, {"POST", "/a/a"},
	} {
		subInUse(t, "/a", q.method, q.path, func(sub chi.Router, routed http.HandlerFunc) {
			sub.Get("/", routed)
			sub.Route("/a", func(in chi.Router) { in.Post("/", routed) })
		})
	}
}

// subInUse mounts at mount a sub-router whose routes routes registers
// (each answering with its pattern), serves method path through it, and
// checks that ChiPattern(sub), asked in the sub-router's r.Use, finds the
// pattern chi routes the request to.
func subInUse(t *testing.T, mount, method, path string, routes func(sub chi.Router, routed http.HandlerFunc)) {
	t.Helper()
	routed := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Pattern", chi.RouteContext(r.Context()).RoutePattern())
	}
	var got string
	sub := chi.NewRouter()
	sub.Use(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = policy.ChiPattern(sub)(r)
			h.ServeHTTP(w, r)
		})
	})
	routes(sub, routed)
	top := chi.NewRouter()
	top.Mount(mount, sub)
	w := httptest.NewRecorder()
	top.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	if want := w.Header().Get("X-Pattern"); got != want {
		t.Errorf("%s %s: ChiPattern(sub) in the sub-router's r.Use = %q; chi routes it to %q (%d)", method, path, got, want, w.Code)
	}
}

// TestRulesReviewChiPatternSubRouterStubLikeItsRoute pins ChiPattern(sub)
// in the r.Use of a sub-router mounted at "/x" with a route "/x/" of its
// own: a request for /x/ is the sub-router's "/" (a HEAD or POST there is
// its 405), though the context's pattern, the mount stub's "/x/", is the
// one the sub-router finds for /x/ from its root.
func TestRulesReviewChiPatternSubRouterStubLikeItsRoute(t *testing.T) {
	for _, q := range []struct{ method, path string }{
		{"HEAD", "/x/"}, {"POST", "/x/"}, {"GET", "/x/"}, {"HEAD", "/x"}, {"GET", "/x/x/"}, {"POST", "/x/x/"},
	} {
		subInUse(t, "/x", q.method, q.path, func(sub chi.Router, routed http.HandlerFunc) {
			sub.Get("/", routed)
			sub.Handle("/x/", routed)
		})
	}
}
