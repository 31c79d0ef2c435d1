package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteKeyUnderOuterMux: a ServeMux mounted in another
// (outer.Handle("/api/", http.StripPrefix("/api", limiter(inner)))), its
// limiter's Set resolving routes with ServeMuxPattern(inner): the request
// carries the outer mux's r.Pattern, "/api/", not the route inner will
// take. A route key part read that pattern, so every route of inner shared
// one key ("/api/") while the Set matched each by its own route: a limit
// per route and client was one limit per client for the whole API. The key
// now follows the Set's pattern function, as it did when no pattern was
// set at all. The same under chi, in the r.Use of a sub-router with
// ChiPattern(sub), where chi has set the mount's "/api/*".
func TestRouteKeyUnderOuterMux(t *testing.T) {
	inner := http.NewServeMux()
	nop := func(http.ResponseWriter, *http.Request) {}
	inner.HandleFunc("GET /users/{id}", nop)
	inner.HandleFunc("GET /posts/{id}", nop)
	p := policy.Must(policy.PerMinute("per-route", 5, keyfunc.Must(keyfunc.Join(remoteKey, keyfunc.Route()))))
	s, err := policy.NewSet([]*policy.Policy{p}, policy.WithPatternFunc(policy.ServeMuxPattern(inner)))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	outer := http.NewServeMux()
	outer.Handle("/api/", http.StripPrefix("/api", recordKey(t, s, &keys)(inner)))
	for _, path := range []string{"/api/users/1", "/api/posts/1", "/api/nowhere"} {
		outer.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	// A path inner routes nowhere (its 404) is keyed policy.NoRoute, as
	// without an outer router, not by the outer pattern.
	checkRouteKeys(t, keys, "GET /users/{id}", "GET /posts/{id}", policy.NoRoute)
}

// recordKey returns a limiter that appends to keys the key s prepares for
// each request's one policy.
func recordKey(t *testing.T, s *policy.Set, keys *[]string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var res policy.Result
			if err := s.Prepare(r, s.Match(r), &res); err != nil || res.Len() != 1 {
				t.Fatalf("Prepare = %v, %d checks", err, res.Len())
			}
			*keys = append(*keys, res.Key(0))
			next.ServeHTTP(w, r)
		})
	}
}

// checkRouteKeys checks that keys are, in order, the per-route policy's
// keys of the client and the patterns.
func checkRouteKeys(t *testing.T, keys []string, patterns ...string) {
	t.Helper()
	for i, pattern := range patterns {
		k, err := keyfunc.Must(keyfunc.Join(remoteKey, keyfunc.Must(keyfunc.Const(pattern))))(httptest.NewRequest("GET", "/", nil))
		if err != nil {
			t.Fatal(err)
		}
		if want := "per-route:" + k; i >= len(keys) || keys[i] != want {
			t.Errorf("key of %s: %q; want %q", pattern, keys, want)
		}
	}
}

func TestRouteKeyInChiSubRouter(t *testing.T) {
	p := policy.Must(policy.PerMinute("per-route", 5, keyfunc.Must(keyfunc.Join(remoteKey, keyfunc.Route()))))
	var keys []string
	r := chi.NewRouter()
	nop := func(http.ResponseWriter, *http.Request) {}
	r.Route("/api", func(sub chi.Router) {
		s, err := policy.NewSet([]*policy.Policy{p}, policy.WithPatternFunc(policy.ChiPattern(sub)))
		if err != nil {
			t.Fatal(err)
		}
		sub.Use(recordKey(t, s, &keys))
		sub.Get("/users/{id}", nop)
		sub.Get("/posts/{id}", nop)
	})
	for _, path := range []string{"/api/users/1", "/api/posts/1"} {
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	checkRouteKeys(t, keys, "/api/users/{id}", "/api/posts/{id}")
}
