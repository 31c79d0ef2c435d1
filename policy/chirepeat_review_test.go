package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestChiPatternSubRouterRouteRepeatsTheMount: ChiPattern(sub) in the
// r.Use of a sub-router (r.Route, r.Mount) answers, before sub routes,
// the route sub will take, also when that route's own pattern is the
// mount's: a route "/files/*" of the sub-router mounted at /files, which
// chi reports "/files/files/*". ChiPattern took the request for one sub
// had routed already (as for a middleware of an r.Group of sub, whose
// patterns end with its route's) and answered the mount's "/files/*", so
// the route's policy never applied. The other routes of sub, a route of
// an r.Group of sub with ChiPattern(sub) (after routing), and a
// top-level route asked after routing, stay as they were. Each handler
// records the pattern chi routed it by, and the policy on that pattern
// must be the one that applies.
func TestChiPatternSubRouterRouteRepeatsTheMount(t *testing.T) {
	routes := []string{"GET /files/files/*", "GET /files/{id}/*", "GET /files/g/{x}", "GET /top/*"}
	var ps []*policy.Policy
	for i, rt := range routes {
		ps = append(ps, policy.Must(policy.PerMinute(string(rune('a'+i)), 5, remoteKey, policy.WithRoutes(rt))))
	}
	var mask uint64
	ran := ""
	limiter := func(router chi.Routes) func(http.Handler) http.Handler {
		s, err := policy.NewSet(ps, policy.WithPatternFunc(policy.ChiPattern(router)))
		if err != nil {
			t.Fatal(err)
		}
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mask = s.Match(r)
				next.ServeHTTP(w, r)
			})
		}
	}
	record := func(w http.ResponseWriter, r *http.Request) { ran = chi.RouteContext(r.Context()).RoutePattern() }
	r := chi.NewRouter()
	r.Route("/files", func(sub chi.Router) {
		sub.Use(limiter(sub))
		sub.Get("/files/*", record)
		sub.Get("/{id}/*", record)
	})
	r.Route("/files/g", func(sub chi.Router) {
		sub.Group(func(g chi.Router) {
			g.Use(limiter(sub))
			g.Get("/{x}", record)
		})
	})
	r.Group(func(g chi.Router) {
		g.Use(limiter(r))
		g.Get("/top/*", record)
	})
	for _, path := range []string{"/files/files/a", "/files/other/a", "/files/g/y", "/top/top/a"} {
		mask, ran = 0, ""
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK || ran == "" {
			t.Fatalf("GET %s: status %d, no route ran", path, w.Code)
		}
		var got, want []string
		for i := range ps {
			if mask&(1<<i) != 0 {
				got = append(got, routes[i])
			}
			if routes[i] == "GET "+ran {
				want = append(want, routes[i])
			}
		}
		if len(want) != 1 || len(got) != 1 || got[0] != want[0] {
			t.Errorf("GET %s, routed by %q: under %q, want %q", path, ran, got, want)
		}
	}
}
