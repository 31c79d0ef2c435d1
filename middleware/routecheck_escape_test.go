package middleware_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCheckRoutesEscapedPath: a route whose path holds an escape, as
// policy.WithRoutes says to write a space ("/a%20b"), is one a ServeMux
// registers as written and matches against a request for /a%20b, and
// the policy applies there; CheckRoutes asked the mux about a request
// whose path was the route's text itself, /a%2520b, and reported the
// route as one the mux routes nowhere. Its requests are now built from
// the route's text as a server parses a request line, the escapes
// decoded. A typo'd escaped route is still reported.
func TestCheckRoutesEscapedPath(t *testing.T) {
	cases := []routeCase{
		{name: "space", route: "GET /a%20b", method: "GET", target: "/a%20b",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("GET /a%20b", ok) })},
		{name: "slash in a segment", route: "GET /f/a%2Fb", method: "GET", target: "/f/a%2Fb",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("GET /f/a%2Fb", ok) })},
		{name: "beside a wildcard", route: "GET /my%20files/{name}", method: "GET", target: "/my%20files/x",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("GET /my%20files/{name}", ok) })},
		{name: "subtree", route: "/my%20files/", method: "GET", target: "/my%20files/x/y",
			setup: muxAround(func(mux *http.ServeMux) { mux.Handle("/my%20files/", ok) })},
		{name: "typo", route: "GET /a%20c",
			setup:  muxAround(func(mux *http.ServeMux) { mux.Handle("GET /a%20b", ok) }),
			misses: [][2]string{{"GET", "/a%20b"}}, says: []string{"routes GET /a%20c to no route"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runRouteCase(t, c) })
	}
}

// TestCheckRoutesMethodsNotFromPaths: a route without a method whose
// path holds a blank (in a chi regexp, which policy.WithRoutes allows
// there) was cut at the blank like "METHOD /path", and the part before
// it ("/x/{id:[b") listed among the methods every route without one is
// asked with, and in the report. Only a route that does not start with
// '/' names a method.
func TestCheckRoutesMethodsNotFromPaths(t *testing.T) {
	store, _ := newStore(t)
	r := chi.NewRouter()
	r.Get("/x/{id:[a ]+}", ok)
	m := middleware.MustNew(store, []*policy.Policy{
		fixed("right", 1, time.Minute, peerIP, policy.WithRoutes("/x/{id:[a ]+}")),
		fixed("typo", 1, time.Minute, peerIP, policy.WithRoutes("/x/{id:[b ]+}")),
	}, middleware.CheckForwarding(false))
	err := m.CheckRoutes(policy.ChiPattern(r))
	if !errors.Is(err, middleware.ErrUnknownRoute) {
		t.Fatalf("CheckRoutes = %v, want the typo reported", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `route "/x/{id:[b ]+}": the router routes /x/b to no route for any of GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE, so`) {
		t.Errorf("CheckRoutes error lists other methods than the nine:\n%s", msg)
	}
	if strings.Contains(msg, `"right"`) {
		t.Errorf("the route the router has is reported:\n%s", msg)
	}
}
