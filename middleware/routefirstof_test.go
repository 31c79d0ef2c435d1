package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestHandBuiltRouteFallbackBeforeRouting: a key built by hand, per
// client and route with the client alone as the fallback
// (FirstOf(Join(ip, Route()), ip)), in a middleware in chi's top-level
// r.Use, which runs before chi has matched the route. Route had no pattern
// there and FirstOf passed over its ErrNoRoute, so every request took the
// fallback: one bucket per client for all routes, /a's request using up
// /b's, with no error, no count and no setup warning (ErrUnrouted is for
// policies with routes). With ChiPattern the Set knew each route, yet the
// key still fell back (only a configuration's key got the route up front).
// Now a route part's ErrNoRoute ends the FirstOf: without a pattern
// function the key cannot be extracted and the policy's key action
// decides (400, the error reported), and with one the key reads the route
// the Set found.
func TestHandBuiltRouteFallbackBeforeRouting(t *testing.T) {
	key := keyfunc.Must(keyfunc.FirstOf(keyfunc.Must(keyfunc.Join(remote, keyfunc.Route())), remote))
	for _, tc := range []struct {
		name    string
		pattern bool
		want    []int // GET /a, GET /b, GET /a
	}{
		{"no pattern function", false, []int{400, 400, 400}},
		{"ChiPattern", true, []int{200, 200, 429}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			r := chi.NewRouter()
			var reported []error
			opts := []middleware.Option{middleware.WithErrorHandler(func(_ *http.Request, err error) { reported = append(reported, err) })}
			if tc.pattern {
				opts = append(opts, middleware.WithPatternFunc(policy.ChiPattern(r)))
			}
			m := middleware.MustNew(store, []*policy.Policy{fixed("per-route", 1, time.Minute, key)}, opts...)
			r.Use(m.Handler)
			r.Get("/a", ok)
			r.Get("/b", ok)
			for i, path := range []string{"/a", "/b", "/a"} {
				if got := serve(r, "GET", path).Code; got != tc.want[i] {
					t.Errorf("request %d, GET %s: %d, want %d", i, path, got, tc.want[i])
				}
			}
			if !tc.pattern && (len(reported) == 0 || !errors.Is(reported[0], keyfunc.ErrNoRoute)) {
				t.Errorf("reported %v, want the key's ErrNoRoute", reported)
			}
		})
	}
}

// TestConfigRouteFallbackToGlobalBeforeRouting: a configuration's key
// route and header X-A with the fallback "global", in chi's top-level r.Use without
// ChiPattern: the route part found no route, FirstOf fell back past it,
// and every request of every client shared the one global bucket, silently
// (the second client's request to another route was refused). Now the
// key cannot be extracted and on_missing_key decides.
func TestConfigRouteFallbackToGlobalBeforeRouting(t *testing.T) {
	cfg, err := policy.ParseConfig([]byte("policies:\n"+
		"  - {name: per-route, limit: 1, window: 1m, key: [route, 'header:X-A'], fallback: global}\n"), "rk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store, _ := newStore(t)
	m, err := middleware.FromConfig(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/a", ok)
	r.Get("/b", ok)
	for i, c := range []struct{ remote, path string }{{"192.0.2.1:1000", "/a"}, {"198.51.100.7:2000", "/b"}} {
		req := httptest.NewRequest("GET", c.path, nil)
		req.RemoteAddr = c.remote
		req.Header.Set("X-A", "a")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != 400 {
			t.Errorf("request %d, GET %s from %s: %d, want 400 (on_missing_key: the route is unknown here)", i, c.path, c.remote, w.Code)
		}
	}
}
