package policy_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRouteKeyServeMuxHostBothPlacements: a route key part
// (keyfunc.Route) gives a ServeMux route the same key wherever the
// limiter sits: around the routed handler (the key is r.Pattern, host
// included: "POST example.com/login") and around the whole mux with
// ServeMuxPattern, which removed the host ("POST /login"). So the key of
// one route changed with the placement, and under the second placement
// the host's route shared its key with the host-less route of the same
// path, which is another route with another handler. The host is now
// kept by the pattern functions too: both placements key the route by its
// pattern as registered. The policies' routes still match by path (the
// route "POST /login" applies under both hosts).
func TestRouteKeyServeMuxHostBothPlacements(t *testing.T) {
	perRoute := policy.Must(policy.PerMinute("per-route", 5, keyfunc.Route()))
	login := policy.Must(policy.PerMinute("login", 5, remoteKey, policy.WithRoutes("POST /login")))
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	targets := []string{"http://example.com/login", "http://other.com/login", "http://example.com/users/7"}

	// recorder is a limiter that records the route key and the policies
	// applied of each request it sees, decided by s.
	type seen struct {
		key  string
		mask uint64
	}
	recorder := func(s *policy.Set, out *[]seen) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var res policy.Result
				mask := s.Match(r)
				if err := s.Prepare(r, mask, &res); err != nil {
					t.Fatalf("%s %s: Prepare = %v", r.Method, r.URL, err)
				}
				*out = append(*out, seen{res.Key(0), mask})
				next.ServeHTTP(w, r)
			})
		}
	}

	// Around each routed handler, with the default pattern function.
	var inner []seen
	s, err := policy.NewSet([]*policy.Policy{perRoute, login})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, p := range []string{"POST example.com/login", "POST /login", "example.com/users/{id}"} {
		mux.Handle(p, recorder(s, &inner)(nop))
	}
	for _, target := range targets {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", target, nil))
	}

	// Around the whole mux, with ServeMuxPattern.
	var outer []seen
	plain := http.NewServeMux()
	for _, p := range []string{"POST example.com/login", "POST /login", "example.com/users/{id}"} {
		plain.Handle(p, nop)
	}
	s, err = policy.NewSet([]*policy.Policy{perRoute, login}, policy.WithPatternFunc(policy.ServeMuxPattern(plain)))
	if err != nil {
		t.Fatal(err)
	}
	h := recorder(s, &outer)(plain)
	for _, target := range targets {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", target, nil))
	}

	want := []seen{
		{"per-route:POST example.com/login", 0b11},
		{"per-route:POST /login", 0b11},
		{"per-route:example.com/users/{id}", 0b01},
	}
	if !slices.Equal(inner, want) {
		t.Errorf("around the routed handlers: %v, want %v", inner, want)
	}
	if !slices.Equal(outer, want) {
		t.Errorf("around the mux with ServeMuxPattern: %v, want %v", outer, want)
	}
}
