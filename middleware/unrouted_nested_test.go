package middleware_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestUnroutedCountsOncePerRequest: Stats().Unrouted counts requests, so
// a request that a middleware nested in itself meets in two layers, each
// asking for its route and neither finding it, counts once. Each layer
// counted it: a 404 through a middleware wrapping a ServeMux twice, or
// through chi's top-level r.Use and a sub-router's r.Use of one middleware
// that asks chi for the route (ChiPattern), counted 2; with a policy
// without routes as well, which the outer layer decides and the inner one
// leaves out (ErrCountedTwice), 2 too; and a layer whose rules were
// replaced since the outer one decided the request, which matches it
// again under the rules it started with, 3.
func TestUnroutedCountsOncePerRequest(t *testing.T) {
	login := func() *policy.Policy { return policy.Must(policy.Login(remote, policy.WithRoutes("POST /login"))) }
	apiLogin := func() *policy.Policy { return policy.Must(policy.Login(remote, policy.WithRoutes("POST /api/login"))) }
	global := func() *policy.Policy { return fixed("global", 100, 60e9, remote) }
	// build makes a fresh policy of each of policies.
	build := func(policies []func() *policy.Policy) []*policy.Policy {
		ps := make([]*policy.Policy, len(policies))
		for i, p := range policies {
			ps[i] = p()
		}
		return ps
	}
	newMux := func() *http.ServeMux {
		mux := http.NewServeMux()
		mux.Handle("POST /login", ok)
		return mux
	}
	type setup struct {
		name string
		// build returns the handler and the middleware whose Stats count.
		build func(t *testing.T) (http.Handler, *middleware.Middleware)
		// notFound is the path no route matches; routed, when set, one
		// that a route takes and that the layers all match.
		notFound, routed string
	}
	// nestedMux wraps a ServeMux in a middleware of policies twice.
	nestedMux := func(policies ...func() *policy.Policy) func(t *testing.T) (http.Handler, *middleware.Middleware) {
		return func(t *testing.T) (http.Handler, *middleware.Middleware) {
			store, _ := newStore(t)
			mux := newMux()
			m := middleware.MustNew(store, build(policies), middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
			return m.Handler(m.Handler(mux)), m
		}
	}
	// nestedChi has a chi router and its /api sub-router each Use a
	// middleware of policies that asks chi for the route.
	nestedChi := func(policies ...func() *policy.Policy) func(t *testing.T) (http.Handler, *middleware.Middleware) {
		return func(t *testing.T) (http.Handler, *middleware.Middleware) {
			store, _ := newStore(t)
			r := chi.NewRouter()
			m := middleware.MustNew(store, build(policies), middleware.WithPatternFunc(policy.ChiPattern(r)))
			r.Use(m.Handler)
			r.Route("/api", func(sr chi.Router) {
				sr.Use(m.Handler)
				sr.Post("/login", ok)
			})
			return r, m
		}
	}
	for _, tc := range []setup{
		{"ServeMux, nested in itself, routes only", nestedMux(login), "/nowhere", "/login"},
		{"ServeMux, nested in itself, with a policy without routes", nestedMux(global, login), "/nowhere", "/login"},
		{"ServeMux, nested in itself, rules replaced between the layers", func(t *testing.T) (http.Handler, *middleware.Middleware) {
			store, _ := newStore(t)
			mux := newMux()
			m := middleware.MustNew(store, []*policy.Policy{global(), login()}, middleware.WithPatternFunc(policy.ServeMuxPattern(mux)))
			// A reload between the layers: the inner one matches the
			// request under the new rules, then under those the outer
			// layer decided it by.
			reload := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if err := m.SetPolicies([]*policy.Policy{global(), login()}); err != nil {
					t.Error(err)
				}
				m.Handler(mux).ServeHTTP(w, r)
			})
			return m.Handler(reload), m
		}, "/nowhere", "/login"},
		{"chi, r.Use and a sub-router's r.Use, ChiPattern", nestedChi(apiLogin), "/api/nowhere", ""},
		{"chi, r.Use and a sub-router's r.Use, ChiPattern, with a policy without routes", nestedChi(global, apiLogin), "/api/nowhere", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, m := tc.build(t)
			for i := range 3 {
				if w := serve(h, "GET", tc.notFound); w.Code != http.StatusNotFound {
					t.Fatalf("GET %s: %d, want 404", tc.notFound, w.Code)
				}
				if got, want := m.Stats().Unrouted, int64(i+1); got != want {
					t.Fatalf("after %d requests no route matches: Stats().Unrouted = %d, want %d (once per request)", i+1, got, want)
				}
			}
			// A request a route takes is no unrouted one, and the
			// login policy counts it once. (In chi, a sub-router's r.Use
			// runs before the sub-router routes, where ChiPattern does
			// not know the route yet, as the package doc says.)
			if tc.routed == "" {
				return
			}
			w := serve(h, "POST", tc.routed)
			if w.Code != http.StatusOK {
				t.Fatalf("POST %s: %d, want 200", tc.routed, w.Code)
			}
			if got := m.Stats().Unrouted; got != 3 {
				t.Errorf("after a routed request: Stats().Unrouted = %d, want 3", got)
			}
			if got, want := w.Header().Get("RateLimit"), `"login";r=4;`; !strings.Contains(got, want) {
				t.Errorf("POST %s: RateLimit %q, want a member %s (the login counted once)", tc.routed, got, want)
			}
		})
	}
}

// TestUnroutedCountedOnRematchOnce: a request a layer counts as unrouted
// only when it matches it again under the rules it started with (see
// Middleware.Handler: the rules were replaced since a layer further out
// decided it) goes on marked as counted, so that a layer of the same
// middleware further in does not count it again. The pattern function
// knows the route for the outer layer and for the middle one under the
// new rules, and no longer from the middle one's match under the old
// rules on (a pattern function need not answer alike in every layer).
func TestUnroutedCountedOnRematchOnce(t *testing.T) {
	login := func() *policy.Policy { return policy.Must(policy.Login(remote, policy.WithRoutes("POST /login"))) }
	global := func() *policy.Policy { return fixed("global", 100, 60e9, remote) }
	store, _ := newStore(t)
	calls := 0
	pattern := func(*http.Request) string {
		if calls++; calls <= 2 {
			return "POST /login"
		}
		return ""
	}
	m := middleware.MustNew(store, []*policy.Policy{global(), login()}, middleware.WithPatternFunc(pattern))
	inner := m.Handler(ok)
	reload := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := m.SetPolicies([]*policy.Policy{global(), login()}); err != nil {
			t.Error(err)
		}
		m.Handler(inner).ServeHTTP(w, r)
	})
	if w := serve(m.Handler(reload), "POST", "/login"); w.Code != http.StatusOK {
		t.Fatalf("POST /login: %d, want 200", w.Code)
	}
	if calls < 4 {
		t.Fatalf("the pattern function was asked %d times, want at least 4 (outer; middle, new and old rules; inner)", calls)
	}
	if got := m.Stats().Unrouted; got != 1 {
		t.Errorf("Stats().Unrouted = %d, want 1: counted by the middle layer's match under the old rules, and not again further in", got)
	}
}
