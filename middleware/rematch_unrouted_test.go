package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestUnroutedWarnedOnRematch: ErrUnrouted is told, once, the first time
// the router routes a request for which the pattern function found no
// route. A middleware nested in itself whose rules were replaced between
// its layers matches a request again, in the layer further in, under the
// rules the layer further out decided it by (see Middleware.Handler); when
// that match needs the route, the pattern function does not know it, and
// a policy without routes applies all the same, the request is counted as
// unrouted there, and was never reported once the router routed it: the
// warning went only with a match under which no policy applied. That one
// named the policies with routes of the rules in force, none once they
// were replaced by rules without routes, rather than those the request
// was matched under and missed.
//
// The setups: the middleware around a whole router, asking it for the
// route, and again around a router mounted in it under a prefix, where it
// asks the outer router for the route of the path the inner one routes
// (the function asks another router than the one that serves the
// request). With no reload between the layers the warning is told (the
// control); with one, the layer further in matches the request under the
// new rules, which need no route, then again under those it started with.
// Beside the policy with routes the layer further in misses, "login", a
// policy applies to every request (decided in both layers), or one with
// the route of the mount (decided in the layer further out only).
func TestUnroutedWarnedOnRematch(t *testing.T) {
	global := func() *policy.Policy { return fixed("global", 100, time.Minute, remote) }
	login := func() *policy.Policy {
		return fixed("login", 1, time.Minute, remote, policy.WithRoutes("POST /login"))
	}
	// A builder returns the handler serving POST /api/login and the
	// middleware, of login and, when mounted, the policy with the mount's
	// route, else global; between its layers inner is wrapped by between
	// (identity when no reload is wanted).
	type builder func(t *testing.T, mounted bool, between func(m *middleware.Middleware, inner http.Handler) http.Handler, opts ...middleware.Option) (http.Handler, *middleware.Middleware)
	policies := func(mounted bool, mount string) []*policy.Policy {
		if mounted {
			return []*policy.Policy{fixed("api", 100, time.Minute, remote, policy.WithRoutes(mount)), login()}
		}
		return []*policy.Policy{global(), login()}
	}
	mux := func(t *testing.T, mounted bool, between func(*middleware.Middleware, http.Handler) http.Handler, opts ...middleware.Option) (http.Handler, *middleware.Middleware) {
		store, clock := newStore(t)
		top := http.NewServeMux()
		api := http.NewServeMux()
		api.Handle("POST /login", ok)
		m := middleware.MustNew(store, policies(mounted, "/api/"),
			append([]middleware.Option{middleware.WithClock(clock), middleware.WithPatternFunc(policy.ServeMuxPattern(top))}, opts...)...)
		top.Handle("/api/", http.StripPrefix("/api", between(m, m.Handler(api))))
		return m.Handler(top), m
	}
	chiRouter := func(t *testing.T, mounted bool, between func(*middleware.Middleware, http.Handler) http.Handler, opts ...middleware.Option) (http.Handler, *middleware.Middleware) {
		store, clock := newStore(t)
		top := chi.NewRouter()
		api := chi.NewRouter()
		api.Post("/login", ok)
		m := middleware.MustNew(store, policies(mounted, "/api/*"),
			append([]middleware.Option{middleware.WithClock(clock), middleware.WithPatternFunc(policy.ChiPattern(top))}, opts...)...)
		top.Use(m.Handler)
		top.Handle("/api/*", http.StripPrefix("/api", between(m, m.Handler(api))))
		return top, m
	}
	noReload := func(_ *middleware.Middleware, inner http.Handler) http.Handler { return inner }
	// reload replaces the rules, once, by one policy without routes, as
	// the request passes between the layers.
	reload := func(t *testing.T) func(m *middleware.Middleware, inner http.Handler) http.Handler {
		return func(m *middleware.Middleware, inner http.Handler) http.Handler {
			done := false
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !done {
					done = true
					if err := m.SetPolicies([]*policy.Policy{global()}); err != nil {
						t.Error(err)
					}
				}
				inner.ServeHTTP(w, r)
			})
		}
	}
	for _, tc := range []struct {
		name  string
		build builder
	}{{"ServeMux", mux}, {"chi", chiRouter}} {
		for _, mounted := range []bool{false, true} {
			for _, rematch := range []bool{false, true} {
				name := tc.name + "/global"
				if mounted {
					name = tc.name + "/mount's route"
				}
				if name += "/same rules"; rematch {
					name = strings.TrimSuffix(name, "same rules") + "rules replaced between the layers"
				}
				t.Run(name, func(t *testing.T) {
					between := noReload
					if rematch {
						between = reload(t)
					}
					var got reports
					h, m := tc.build(t, mounted, between, got.handler())
					if w := serve(h, "POST", "/api/login"); w.Code != http.StatusOK {
						t.Fatalf("POST /api/login: %d, want 200", w.Code)
					}
					if n := m.Stats().Unrouted; n != 1 {
						t.Errorf("Stats().Unrouted = %d, want 1 (the layer further in found no route)", n)
					}
					rep := got.of(middleware.ErrUnrouted)
					if len(rep) != 1 || !strings.Contains(rep[0].Error(), "/login") || !strings.Contains(rep[0].Error(), "another router") {
						t.Fatalf("told %v, want ErrUnrouted once, naming the route the router took and the pattern function's router", rep)
					}
					if !strings.Contains(rep[0].Error(), `"login"`) {
						t.Errorf("told %q, want it to name the policy with routes the request missed, \"login\"", rep[0])
					}
				})
			}
		}
	}
}
