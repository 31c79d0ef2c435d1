package policy_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiPatternEmptyPath: a request in absolute form without a path
// ("GET http://host HTTP/1.1") reaches the handler with an empty URL.Path;
// chi routes it as "/", so ChiPattern must answer "/" too. It asked Find
// with "" and answered "", so such requests escaped the policies of the
// root route (and of a catch-all "/*"). Sent over a real connection to a
// real server.
func TestChiPatternEmptyPath(t *testing.T) {
	r := chi.NewRouter()
	find := policy.ChiPattern(r)
	type seen struct{ path, asked, served string }
	got := make(chan seen, 1)
	var asked string
	r.Use(asking(find, &asked))
	r.Get("/", func(w http.ResponseWriter, req *http.Request) {
		got <- seen{req.URL.Path, asked, chi.RouteContext(req.Context()).RoutePattern()}
	})
	srv := httptest.NewServer(r)
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET http://%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", srv.Listener.Addr(), srv.Listener.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200 (chi serves the root route)", resp.StatusCode)
	}
	s := <-got
	if s.path != "" {
		t.Fatalf("URL.Path = %q, the test needs the empty path", s.path)
	}
	if s.asked != s.served || s.served != "/" {
		t.Errorf("ChiPattern = %q, chi routed to %q", s.asked, s.served)
	}
}

// TestChiPatternSubRouter: ChiPattern(sub) in the r.Use of a sub-router
// (the function of r.Route, a router given to r.Mount), which runs before
// that sub-router routes, must answer the pattern as chi's RoutePattern
// gives it once routed: the mount's prefix included ("/api/users/{id}").
// It looked the route up from the sub-router alone, in a fresh route
// context, and answered "/users/{id}": policies on "/api/users/{id}" (the
// pattern chi reports, the one WithRoutes takes) never applied there.
func TestChiPatternSubRouter(t *testing.T) {
	var asked, served []string
	h := func(w http.ResponseWriter, req *http.Request) {
		served = append(served, chi.RouteContext(req.Context()).RoutePattern())
	}
	use := func(sub chi.Router) {
		find := policy.ChiPattern(sub)
		sub.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				asked = append(asked, find(req))
				next.ServeHTTP(w, req)
			})
		})
	}
	r := chi.NewRouter()
	r.Route("/api", func(sub chi.Router) {
		use(sub)
		sub.Get("/users/{id}", h)
		sub.Get("/", h)
	})
	m := chi.NewRouter()
	use(m)
	m.Get("/files/*", h)
	r.Mount("/m", m)
	for _, path := range []string{"/api/users/1", "/api/", "/m/files/a/b"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	if fmt.Sprint(asked) != fmt.Sprint(served) || len(served) != 3 {
		t.Errorf("ChiPattern in the sub-routers' r.Use gave %q, chi's RoutePattern once routed %q", asked, served)
	}
}

// TestChiPatternAfterRouting: ChiPattern(r) in the r.Use of an r.Group,
// where r (top-level or mounted) has routed already, answers the route
// chi took, not the mount's patterns followed by the route again.
func TestChiPatternAfterRouting(t *testing.T) {
	var asked, served []string
	h := func(w http.ResponseWriter, req *http.Request) {
		served = append(served, chi.RouteContext(req.Context()).RoutePattern())
	}
	group := func(r chi.Router, route string) {
		find := policy.ChiPattern(r)
		r.Group(func(g chi.Router) {
			g.Use(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					asked = append(asked, find(req))
					next.ServeHTTP(w, req)
				})
			})
			g.Get(route, h)
		})
	}
	r := chi.NewRouter()
	group(r, "/users/{id}")
	r.Route("/api", func(sub chi.Router) { group(sub, "/files/*") })
	for _, path := range []string{"/users/1", "/api/files/a/b"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	if fmt.Sprint(asked) != fmt.Sprint(served) || len(served) != 2 {
		t.Errorf("ChiPattern in an r.Group after routing gave %q, chi's RoutePattern %q", asked, served)
	}
}

// TestChiPatternFromHandler: ChiPattern(r) asked by a handler of a
// sub-router mounted in r (r.Route, r.Mount), after r has routed the
// request there (the middleware's Peek and Reset), answers the route chi
// took; ChiPattern of a router that did not route the request (one the
// request never passed through) answers "", though the request carries
// the patterns chi matched.
func TestChiPatternFromHandler(t *testing.T) {
	r := chi.NewRouter()
	find := policy.ChiPattern(r)
	other := chi.NewRouter()
	other.Get("/other", func(http.ResponseWriter, *http.Request) {})
	findOther := policy.ChiPattern(other)
	var asked, served, otherAsked []string
	h := func(w http.ResponseWriter, req *http.Request) {
		asked = append(asked, find(req))
		otherAsked = append(otherAsked, findOther(req))
		served = append(served, chi.RouteContext(req.Context()).RoutePattern())
	}
	r.Route("/api", func(sub chi.Router) { sub.Get("/users/{id}", h) })
	m := chi.NewRouter()
	m.Get("/files/*", h)
	r.Mount("/m", m)
	for _, path := range []string{"/api/users/1", "/m/files/a/b"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	if fmt.Sprint(asked) != fmt.Sprint(served) || len(served) != 2 {
		t.Errorf("ChiPattern(r) in the sub-routers' handlers gave %q, chi's RoutePattern %q", asked, served)
	}
	if fmt.Sprint(otherAsked) != "[ ]" {
		t.Errorf("ChiPattern of a router the requests never passed through gave %q, want \"\" each", otherAsked)
	}
}
