package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiPatternInMountedHandler: asked after routing by a plain handler
// (not a chi router) that r.Mount mounted in r, ChiPattern(r) answers the
// route chi routed the request to, "/legacy/*", as it does for a handler
// of a mounted sub-router: the route context's RoutePath ("/login", the
// path past the mount) finds nothing from r's root, the URL's path finds
// the mount, whose one pattern is the one chi matched.
func TestChiPatternInMountedHandler(t *testing.T) {
	r := chi.NewRouter()
	find := policy.ChiPattern(r)
	got := "unasked"
	r.Mount("/legacy", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got = find(req)
	}))
	r.Get("/x", func(http.ResponseWriter, *http.Request) {})
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/legacy/login", nil))
	if got != "/legacy/*" {
		t.Errorf("GET /legacy/login, asked in the mounted handler: ChiPattern = %q, want %q", got, "/legacy/*")
	}
}

// TestChiPatternSubRouterNotFound: ChiPattern(sub) in a middleware of a
// sub-router mounted at /api (installed with sub.Use) answers "" for a
// request no route of sub serves, even when the URL's whole path, asked
// from sub's root, would find one of sub's routes: /api/users is a 404
// in sub ("/users" has one segment, "/{kind}/{id}" two), though
// "/api/users" looks like sub's "/{kind}/{id}". It does not answer the
// mount's pattern, "/api/*", which no route of sub is.
func TestChiPatternSubRouterNotFound(t *testing.T) {
	r := chi.NewRouter()
	sub := chi.NewRouter()
	find := policy.ChiPattern(sub)
	got := "unasked"
	sub.Use(asking(find, &got))
	nop := func(http.ResponseWriter, *http.Request) {}
	sub.Get("/{kind}/{id}", nop)
	r.Mount("/api", sub)
	for _, tc := range []struct{ path, want string }{
		{"/api/users/7", "/api/{kind}/{id}"},
		{"/api/users", ""},
		{"/api/nothing/at/all", ""},
	} {
		got = "unasked"
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if got != tc.want {
			t.Errorf("GET %s (status %d): ChiPattern(sub) = %q, want %q", tc.path, rec.Code, got, tc.want)
		}
	}
}
