package middleware_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestUnrouted404NoSetupWarning: a middleware set up as documented, around
// a whole ServeMux with policy.ServeMuxPattern or in chi's top-level r.Use
// with policy.ChiPattern, met a request that no route matches (a
// scanner's /wp-admin, a browser's /favicon.ico, a path under a chi mount
// that the sub-router does not serve) and logged "ratekeeper: setup
// warning" with ErrUnrouted, which reads like a configuration mistake. The
// pattern function found no route because there is none: the router
// answers 404 itself. Such a request is counted (Stats().Unrouted) and no
// longer reported; the setup is right, and the routed requests are
// limited.
func TestUnrouted404NoSetupWarning(t *testing.T) {
	login := func() *policy.Policy {
		return fixed("login", 1, time.Minute, remote, policy.WithRoutes("POST /login"))
	}
	for _, tc := range []struct {
		name    string
		handler func(logOpt, reportOpt middleware.Option) (http.Handler, *middleware.Middleware)
		misses  []string // paths no route serves
	}{
		{"ServeMux", func(logOpt, reportOpt middleware.Option) (http.Handler, *middleware.Middleware) {
			mux := http.NewServeMux()
			mux.Handle("POST /login", ok)
			mux.Handle("GET /users/{id}", ok)
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{login()},
				middleware.WithPatternFunc(policy.ServeMuxPattern(mux)), logOpt, reportOpt)
			return m.Handler(mux), m
		}, []string{"/wp-admin", "/favicon.ico", "/users/1/extra"}},
		{"chi", func(logOpt, reportOpt middleware.Option) (http.Handler, *middleware.Middleware) {
			r := chi.NewRouter()
			store, _ := newStore(t)
			m := middleware.MustNew(store, []*policy.Policy{login()},
				middleware.WithPatternFunc(policy.ChiPattern(r)), logOpt, reportOpt)
			r.Use(m.Handler)
			r.Post("/login", ok)
			r.Route("/api", func(r chi.Router) { r.Get("/users/{id}", ok) })
			return r, m
		}, []string{"/wp-admin", "/favicon.ico", "/api/nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs lockedBuffer
			var got reports
			h, m := tc.handler(middleware.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))), got.handler())
			for _, p := range tc.misses {
				if w := serve(h, "GET", p); w.Code != http.StatusNotFound {
					t.Fatalf("GET %s: %d, want the router's 404", p, w.Code)
				}
			}
			if n := m.Stats().Unrouted; n != int64(len(tc.misses)) {
				t.Errorf("Stats().Unrouted = %d, want %d (every 404 counted)", n, len(tc.misses))
			}
			if rep := got.of(middleware.ErrUnrouted); len(rep) != 0 {
				t.Errorf("error handler told %v for the router's 404s, want nothing", rep)
			}
			if s := logs.String(); strings.Contains(s, "setup warning") {
				t.Errorf("log after the router's 404s:\n%s\nwant no setup warning", s)
			}
			// The setup is right: the route's policy applies.
			for i, want := range []int{200, 429} {
				if w := serve(h, "POST", "/login"); w.Code != want {
					t.Fatalf("POST /login #%d: %d, want %d", i+1, w.Code, want)
				}
			}
		})
	}
}

// TestUnroutedPatternFuncOfAnotherRouter: a pattern function that asks a
// router other than the one serving the requests finds no route for
// requests that router then routes, so the policies with routes never
// apply. That is still reported, once, when the router has routed such a
// request, naming the route it took.
func TestUnroutedPatternFuncOfAnotherRouter(t *testing.T) {
	login := fixed("login", 1, time.Minute, remote, policy.WithRoutes("POST /login"))
	t.Run("ServeMux", func(t *testing.T) {
		other := http.NewServeMux()
		other.Handle("GET /elsewhere", ok)
		mux := http.NewServeMux()
		mux.Handle("POST /login", ok)
		store, _ := newStore(t)
		var got reports
		// Beside a policy without routes, which applies to every
		// request: the request is decided, then passed on.
		all := fixed("all", 100, time.Minute, remote)
		m := middleware.MustNew(store, []*policy.Policy{login, all},
			middleware.WithPatternFunc(policy.ServeMuxPattern(other)), got.handler())
		h := m.Handler(mux)
		serve(h, "GET", "/favicon.ico") // a 404 of mux: not reported
		if rep := got.of(middleware.ErrUnrouted); len(rep) != 0 {
			t.Fatalf("after a 404: told %v, want nothing", rep)
		}
		for range 3 {
			serve(h, "POST", "/login")
		}
		rep := got.of(middleware.ErrUnrouted)
		if len(rep) != 1 || !strings.Contains(rep[0].Error(), `"POST /login"`) || !strings.Contains(rep[0].Error(), "another router") {
			t.Errorf("told %v, want ErrUnrouted once, naming the route the router took and the pattern function's router", rep)
		}
	})
	t.Run("chi", func(t *testing.T) {
		other := chi.NewRouter()
		other.Get("/elsewhere", ok)
		r := chi.NewRouter()
		store, _ := newStore(t)
		var got reports
		m := middleware.MustNew(store, []*policy.Policy{login},
			middleware.WithPatternFunc(policy.ChiPattern(other)), got.handler())
		r.Use(m.Handler)
		r.Post("/login", ok)
		serve(r, "GET", "/favicon.ico")
		if rep := got.of(middleware.ErrUnrouted); len(rep) != 0 {
			t.Fatalf("after a 404: told %v, want nothing", rep)
		}
		for range 3 {
			serve(r, "POST", "/login")
		}
		rep := got.of(middleware.ErrUnrouted)
		if len(rep) != 1 || !strings.Contains(rep[0].Error(), `"/login"`) {
			t.Errorf("told %v, want ErrUnrouted once, naming the route chi took", rep)
		}
	})
}
