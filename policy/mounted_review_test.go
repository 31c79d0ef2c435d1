package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestMountedRouterSeesTheMountsPattern pins what RoutePattern, Route and
// the README say of a limiter around a router mounted in another, which
// runs before that router has routed: it sees the mount's pattern (the
// "/api/" of a ServeMux mounted in another, the "/api/*" of chi's
// sub-router), not "", so a policy with routes does not apply there and,
// the pattern being known, the request is not counted as unrouted; a route
// key is the mount's, one for every route below it. Given the pattern
// function of its own router, the policy applies.
func TestMountedRouterSeesTheMountsPattern(t *testing.T) {
	nop := func(http.ResponseWriter, *http.Request) {}
	type seen struct {
		pattern  string
		mask     uint64
		unrouted int
		key      string
	}
	// limiter records what a Set with pattern function pf (nil: the
	// default) finds for each request.
	limiter := func(route string, pf func(*http.Request) string, got *seen) func(http.Handler) http.Handler {
		p := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes(route)))
		opts := []policy.SetOption{policy.WithUnroutedFunc(func(*http.Request) { got.unrouted++ })}
		if pf != nil {
			opts = append(opts, policy.WithPatternFunc(pf))
		}
		s, err := policy.NewSet([]*policy.Policy{p}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.pattern, got.mask = policy.RoutePattern(r), s.Match(r)
				got.key, _ = keyfunc.Route()(r)
				next.ServeHTTP(w, r)
			})
		}
	}
	check := func(name string, got, want seen) {
		t.Helper()
		if got != want {
			t.Errorf("%s: saw %+v, want %+v", name, got, want)
		}
	}

	// A ServeMux mounted in another: its patterns are its own.
	inner := http.NewServeMux()
	inner.HandleFunc("POST /login", nop)
	for _, tt := range []struct {
		name string
		pf   func(*http.Request) string
		want seen
	}{
		{"ServeMux, default pattern function", nil, seen{"/api/", 0, 0, "/api/"}},
		{"ServeMux, ServeMuxPattern(inner)", policy.ServeMuxPattern(inner), seen{"/api/", 1, 0, "/api/"}},
	} {
		var got seen
		outer := http.NewServeMux()
		outer.Handle("/api/", http.StripPrefix("/api", limiter("POST /login", tt.pf, &got)(inner)))
		outer.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/login", nil))
		check(tt.name, got, tt.want)
	}

	// chi's sub-router, the limiter in its r.Use.
	for _, tt := range []struct {
		name  string
		chiPf bool
		want  seen
	}{
		{"chi sub-router, default pattern function", false, seen{"/api/*", 0, 0, "/api/*"}},
		{"chi sub-router, ChiPattern(sub)", true, seen{"/api/*", 1, 0, "/api/*"}},
	} {
		var got seen
		r := chi.NewRouter()
		r.Route("/api", func(sub chi.Router) {
			var pf func(*http.Request) string
			if tt.chiPf {
				pf = policy.ChiPattern(sub)
			}
			sub.Use(limiter("POST /api/login", pf, &got)) // chi's patterns start with the mount's
			sub.Post("/login", nop)
		})
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/login", nil))
		check(tt.name, got, tt.want)
	}
}
