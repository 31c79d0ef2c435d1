package middleware_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// routeRules are a rule table as a user writes it: a strict login limit
// and an API limit, each with a typo ("/logn"; "{id}" for the router's
// "{ID}"), a route without a method, one on a method the route lacks,
// and routes written right.
func routeRules() []*policy.Policy {
	return []*policy.Policy{
		fixed("login", 2, time.Minute, peerIP, policy.WithRoutes("POST /logn")),
		fixed("api", 2, time.Minute, peerIP, policy.WithRoutes("GET /api/{id}")),
		fixed("get-login", 2, time.Minute, peerIP, policy.WithRoutes("GET /login")),
		fixed("any-login", 100, time.Minute, peerIP, policy.WithRoutes("/login")),
		fixed("right", 100, time.Minute, peerIP, policy.WithRoutes("POST /login", "GET /api/{ID}")),
	}
}

// routesFor serves POST /login and GET /api/{ID} through m, with chi (in
// an r.Group, where chi has routed) or a ServeMux (m around each route's
// handler), and returns the router's pattern function.
func routesFor(mux string, m *middleware.Middleware) (http.Handler, func(*http.Request) string) {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Group(func(r chi.Router) {
			r.Use(m.Handler)
			r.Post("/login", ok)
			r.Get("/api/{ID}", ok)
		})
		return r, policy.ChiPattern(r)
	}
	sm := http.NewServeMux()
	sm.Handle("POST /login", m.Handler(ok))
	sm.Handle("GET /api/{ID}", m.Handler(ok))
	return sm, policy.ServeMuxPattern(sm)
}

// TestCheckRoutesFindsTypos: a per-route rule whose pattern is valid but
// matches no route of the router (a typo: "POST /logn" for "POST
// /login"; "/api/{id}" for "/api/{ID}") never applied, and nothing said
// so: the stricter login limit was just absent (Stats().Unrouted counts
// only requests whose route is unknown, and these are known). CheckRoutes,
// called once the routes are registered, names each such route, where
// the router sends its requests, and not the routes it has. Through real
// chi and ServeMux routers with httptest.
func TestCheckRoutesFindsTypos(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m := middleware.MustNew(store, routeRules(), got.handler(), middleware.CheckForwarding(false))
			h, pattern := routesFor(mux, m)

			// The gap: the login limit of 2 is absent, silently.
			srv := httptest.NewServer(h)
			defer srv.Close()
			for i := range 3 {
				resp, err := srv.Client().Post(srv.URL+"/login", "text/plain", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("POST /login %d: %d", i+1, resp.StatusCode)
				}
			}
			if n := m.Stats().Unrouted; n != 0 || len(got.errs) != 0 {
				t.Fatalf("Unrouted %d, reports %v: the typo was seen at run time", n, got.errs)
			}

			err := m.CheckRoutes(pattern)
			if !errors.Is(err, middleware.ErrUnknownRoute) {
				t.Fatalf("CheckRoutes = %v, want ErrUnknownRoute", err)
			}
			msg := err.Error()
			apiTo := `"/api/{ID}"`
			if mux == "ServeMux" {
				apiTo = `"GET /api/{ID}"`
			}
			for _, want := range []string{
				`policy "login", route "POST /logn": the router routes POST /logn to no route`,
				`policy "api", route "GET /api/{id}": the router routes GET /api/{id} to ` + apiTo,
				`policy "get-login", route "GET /login": the router routes GET /login to no route`,
			} {
				if !strings.Contains(msg, want) {
					t.Errorf("CheckRoutes error does not say %q:\n%s", want, msg)
				}
			}
			if n := strings.Count(msg, middleware.ErrUnknownRoute.Error()); n != 3 {
				t.Errorf("%d routes reported, want 3:\n%s", n, msg)
			}
			for _, right := range []string{`"any-login"`, `"right"`} {
				if strings.Contains(msg, right) {
					t.Errorf("a route the router has was reported (%s):\n%s", right, msg)
				}
			}
			// Fixed, the check passes and the limit applies.
			fixedRules := []*policy.Policy{
				fixed("login", 2, time.Minute, peerIP, policy.WithRoutes("POST /login")),
				fixed("api", 2, time.Minute, peerIP, policy.WithRoutes("GET /api/{ID}")),
			}
			if err := m.SetPolicies(fixedRules); err != nil {
				t.Fatal(err)
			}
			if err := m.CheckRoutes(pattern); err != nil {
				t.Errorf("CheckRoutes after the fix = %v, want nil", err)
			}
			var codes []int
			for range 3 {
				resp, err := srv.Client().Post(srv.URL+"/login", "text/plain", nil)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				codes = append(codes, resp.StatusCode)
			}
			if codes[2] != http.StatusTooManyRequests {
				t.Errorf("POST /login x3 after the fix: %v, want the third 429", codes)
			}
		})
	}
}

// TestCheckRoutesNoFalseAlarms: every route written as the router
// registered it passes, whatever its shape: wildcards, a chi regexp, a
// ServeMux "{$}" beside the subtree it ends, a "{p...}" beside a "{p}",
// chi's catch-all and a trailing slash chi trims, the root of an
// r.Route, a mounted router's route asked from the top, HEAD beside GET,
// a method of the application's own, a route without a method, and a
// literal beside a wildcard.
func TestCheckRoutesNoFalseAlarms(t *testing.T) {
	t.Run("ServeMux", func(t *testing.T) {
		sm := http.NewServeMux()
		for _, p := range []string{
			"GET /users/{id}", "/static/", "GET /static/{$}", "/files/{p...}", "/files/{p}",
			"GET /x", "HEAD /x", "PURGE /cache", "GET /api/x", "GET /api/{id}", "POST /login/",
			"DELETE /items/{id}",
		} {
			sm.Handle(p, ok)
		}
		routes := []string{
			"GET /users/{id}", "/users/{id}", "/static/", "GET /static/{$}", "/files/{p...}", "/files/{p}",
			"GET /x", "HEAD /x", "PURGE /cache", "/cache", "GET /api/x", "GET /api/{id}", "POST /login/",
			"/items/{id}",
		}
		checkAll(t, routes, policy.ServeMuxPattern(sm))
	})
	t.Run("chi", func(t *testing.T) {
		r := chi.NewRouter()
		r.Get("/users/{id}", ok)
		r.Get(`/n/{id:[0-9]+}`, ok)
		r.Get(`/d/{date:\d{4}-\d{2}}`, ok)
		r.Get("/f/{name}.{ext}", ok)
		r.Post("/login/", ok)
		r.Get("/files/*", ok)
		r.Head("/x", ok)
		r.Get("/x", ok)
		r.Route("/v1", func(r chi.Router) {
			r.Get("/", ok)
			r.Delete("/items/{id}", ok)
		})
		api := chi.NewRouter()
		api.Get("/u/{id}", ok)
		r.Mount("/api", api)
		routes := []string{
			"GET /users/{id}", `GET /n/{id:[0-9]+}`, `/d/{date:\d{4}-\d{2}}`, "GET /f/{name}.{ext}",
			"POST /login/", "/files/*", "HEAD /x", "GET /x", "GET /v1/",
			"/v1/items/{id}", "GET /api/u/{id}",
		}
		checkAll(t, routes, policy.ChiPattern(r))
		// The routes chi reports for "/login/" and "/v1/", apart: beside
		// those, in other policies, they are ErrIndistinctRoutes (see
		// TestCheckRoutesSlashTwins).
		checkAll(t, []string{"POST /login", "GET /v1"}, policy.ChiPattern(r))
	})
}

// checkAll checks one policy per route under pattern, and wants no error.
func checkAll(t *testing.T, routes []string, pattern func(*http.Request) string) {
	t.Helper()
	store, _ := newStore(t)
	var ps []*policy.Policy
	for i, rt := range routes {
		ps = append(ps, fixed("p"+string(rune('a'+i)), 10, time.Minute, peerIP, policy.WithRoutes(rt)))
	}
	m := middleware.MustNew(store, ps, middleware.CheckForwarding(false))
	if err := m.CheckRoutes(pattern); err != nil {
		t.Errorf("CheckRoutes = %v, want nil", err)
	}
}

// TestCheckRoutesOwnPatternFunc: CheckRoutes(nil) asks the middleware's
// own pattern function (WithPatternFunc), and is an error without one.
func TestCheckRoutesOwnPatternFunc(t *testing.T) {
	store, _ := newStore(t)
	sm := http.NewServeMux()
	sm.Handle("POST /login", ok)
	rules := []*policy.Policy{fixed("login", 2, time.Minute, peerIP, policy.WithRoutes("POST /logn"))}
	m := middleware.MustNew(store, rules, middleware.WithPatternFunc(policy.ServeMuxPattern(sm)), middleware.CheckForwarding(false))
	if err := m.CheckRoutes(nil); !errors.Is(err, middleware.ErrUnknownRoute) {
		t.Errorf("CheckRoutes(nil) with WithPatternFunc = %v, want ErrUnknownRoute", err)
	}
	bare := middleware.MustNew(store, rules, middleware.CheckForwarding(false))
	if err := bare.CheckRoutes(nil); err == nil || errors.Is(err, middleware.ErrUnknownRoute) || !strings.Contains(err.Error(), "pattern function") {
		t.Errorf("CheckRoutes(nil) without a pattern function = %v, want an error asking for one", err)
	}
	plain := middleware.MustNew(store, []*policy.Policy{fixed("all", 2, time.Minute, peerIP)}, middleware.CheckForwarding(false))
	if err := plain.CheckRoutes(policy.ServeMuxPattern(sm)); err != nil {
		t.Errorf("CheckRoutes with no routed policy = %v, want nil", err)
	}
}
