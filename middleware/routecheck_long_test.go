package middleware_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCheckRoutesCutsLongRoutes: a route of a policy may be as long as
// the router takes (here 100 KB, a valid pattern of chi and of a
// ServeMux); the errors of CheckRoutes and CheckConfigRoutes quote it,
// and the paths and router patterns built from it, cut to their first
// characters with a mark of their length, not whole in one line of a
// log. Each case reaches another message: the route routed nowhere, the
// router having the path on another method, and a chi router having the
// path without its first segment (one mounted there); and the route's
// method may be as long (a method of 100 KB). Through real chi
// and ServeMux routers.
func TestCheckRoutesCutsLongRoutes(t *testing.T) {
	long := "/" + strings.Repeat("a", 100_000)
	mark := fmt.Sprintf("… (%d bytes)", len(long))
	methodMark := fmt.Sprintf("… (%d bytes)", len(long)-1)
	cases := []struct {
		name, mux, route string
		register         func(r chi.Router, sm *http.ServeMux)
		says             string // a part of the message, to know which one it is
	}{
		{"nowhere/chi", "chi", "GET " + long, func(r chi.Router, _ *http.ServeMux) { r.Get("/login", ok) }, "to no route"},
		{"nowhere/ServeMux", "ServeMux", "GET " + long, func(_ chi.Router, sm *http.ServeMux) { sm.Handle("GET /login", ok) }, "to no route"},
		{"other-method/ServeMux", "ServeMux", "GET " + long, func(_ chi.Router, sm *http.ServeMux) { sm.Handle("POST "+long, ok) }, "on other methods"},
		{"other-method/chi", "chi", "GET " + long, func(r chi.Router, _ *http.ServeMux) { r.Post(long, ok) }, "on other methods"},
		{"mounted/chi", "chi", "GET /api" + long, func(r chi.Router, _ *http.ServeMux) { r.Get(long, ok) }, "mounted at"},
		{"method/chi", "chi", strings.Repeat("M", 100_000) + " /login", func(r chi.Router, _ *http.ServeMux) { r.Post("/login", ok) }, "to no route"},
		{"method/ServeMux", "ServeMux", strings.Repeat("M", 100_000) + " /login", func(_ chi.Router, sm *http.ServeMux) { sm.Handle("POST /login", ok) }, "on other methods"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store, _ := newStore(t)
			ps := []*policy.Policy{fixed("long", 5, time.Minute, peerIP, policy.WithRoutes(c.route))}
			m := middleware.MustNew(store, ps, middleware.CheckForwarding(false))
			var pattern func(*http.Request) string
			if c.mux == "chi" {
				r := chi.NewRouter()
				c.register(r, nil)
				pattern = policy.ChiPattern(r)
			} else {
				sm := http.NewServeMux()
				c.register(nil, sm)
				pattern = policy.ServeMuxPattern(sm)
			}
			for _, check := range []struct {
				name string
				run  func() error
			}{
				{"CheckRoutes", func() error { return m.CheckRoutes(pattern) }},
				{"CheckConfigRoutes", func() error { return m.CheckConfigRoutes(&policy.Config{Policies: ps}, pattern) }},
			} {
				err := check.run()
				if !errors.Is(err, middleware.ErrUnknownRoute) {
					t.Fatalf("%s = %.300v, want ErrUnknownRoute", check.name, err)
				}
				msg := err.Error()
				if len(msg) > 2000 || !(strings.Contains(msg, mark) || strings.Contains(msg, methodMark)) || !strings.Contains(msg, c.says) ||
					!strings.Contains(msg, `, route "`) {
					t.Errorf("%s error (%d bytes), want the route cut and marked %q, saying %q:\n%.1200s", check.name, len(msg), mark, c.says, msg)
				}
			}
		})
	}
}
