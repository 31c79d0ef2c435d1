package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestUnroutedWarnedOnRematchWhenTheHandlerPanics: a request matched again
// in a layer further in of a middleware nested in itself, under the rules
// the layer further out decided it by (they were replaced between the
// layers), and found unrouted there by a pattern function that asks
// another router than the one that serves it, is told (ErrUnrouted) once
// the router routed it, as TestUnroutedWarnedOnRematch shows, even when the
// handler the router routed it to panics and a recoverer further out
// (chi's middleware.Recoverer, its ServeMux equivalent) answers 500: the
// router routed it all the same, and the other paths ask the router even
// then (a request counted as unrouted by the layer that first met it, or
// matched again with a policy still to decide). When no policy applied
// under the rules matched again (the mount's route, which the request
// does not have further in), the question was asked after next returned,
// not deferred: the panic skipped it, and ErrUnrouted was never told.
func TestUnroutedWarnedOnRematchWhenTheHandlerPanics(t *testing.T) {
	login := func() *policy.Policy {
		return fixed("login", 1, time.Minute, remote, policy.WithRoutes("POST /login"))
	}
	global := func() *policy.Policy { return fixed("global", 100, time.Minute, remote) }
	// policies are those the request starts with: beside login, the
	// policy of the mount's route (no policy applies to the request
	// further in once matched again) or one for every request (one does).
	policies := func(mounted bool, mount string) []*policy.Policy {
		if mounted {
			return []*policy.Policy{fixed("api", 100, time.Minute, remote, policy.WithRoutes(mount)), login()}
		}
		return []*policy.Policy{global(), login()}
	}
	panics := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("handler failed") })
	// reload replaces the rules by global alone, once, as the request
	// passes between the layers, when replace is set.
	reload := func(t *testing.T, replace bool, m *middleware.Middleware, inner http.Handler) http.Handler {
		done := !replace
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
	build := map[string]func(t *testing.T, mounted, replace bool, opts ...middleware.Option) (http.Handler, *middleware.Middleware){
		"ServeMux": func(t *testing.T, mounted, replace bool, opts ...middleware.Option) (http.Handler, *middleware.Middleware) {
			store, clock := newStore(t)
			top, api := http.NewServeMux(), http.NewServeMux()
			api.Handle("POST /login", panics)
			m := middleware.MustNew(store, policies(mounted, "/api/"),
				append([]middleware.Option{middleware.WithClock(clock), middleware.WithPatternFunc(policy.ServeMuxPattern(top))}, opts...)...)
			top.Handle("/api/", http.StripPrefix("/api", reload(t, replace, m, m.Handler(api))))
			return recoverTo500(m.Handler(top)), m
		},
		"chi": func(t *testing.T, mounted, replace bool, opts ...middleware.Option) (http.Handler, *middleware.Middleware) {
			store, clock := newStore(t)
			top, api := chi.NewRouter(), chi.NewRouter()
			api.Post("/login", panics)
			m := middleware.MustNew(store, policies(mounted, "/api/*"),
				append([]middleware.Option{middleware.WithClock(clock), middleware.WithPatternFunc(policy.ChiPattern(top))}, opts...)...)
			top.Use(chimw.RequestLogger(quietLog{}), chimw.Recoverer, m.Handler)
			top.Handle("/api/*", http.StripPrefix("/api", reload(t, replace, m, m.Handler(api))))
			return top, m
		},
	}
	for _, router := range []string{"ServeMux", "chi"} {
		for _, mounted := range []bool{true, false} {
			for _, replace := range []bool{false, true} {
				name := router + "/global"
				if mounted {
					name = router + "/mount's route"
				}
				if replace {
					name += "/rules replaced between the layers"
				} else {
					name += "/same rules"
				}
				t.Run(name, func(t *testing.T) {
					var got reports
					h, m := build[router](t, mounted, replace, got.handler())
					if w := serve(h, "POST", "/api/login"); w.Code != http.StatusInternalServerError {
						t.Fatalf("POST /api/login: %d, want 500 (the recoverer's)", w.Code)
					}
					if n := m.Stats().Unrouted; n != 1 {
						t.Errorf("Stats().Unrouted = %d, want 1 (the layer further in found no route)", n)
					}
					rep := got.of(middleware.ErrUnrouted)
					if len(rep) != 1 || !strings.Contains(rep[0].Error(), "/login") || !strings.Contains(rep[0].Error(), `"login"`) {
						t.Fatalf("told %v, want ErrUnrouted once, naming the route the router took and the policy \"login\"", rep)
					}
				})
			}
		}
	}
}
