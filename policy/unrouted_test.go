package policy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithUnroutedFunc: the function is called once per Match whose route
// a policy with routes needed and the pattern function did not know, and
// never when it knew it or when no policy has routes.
func TestWithUnroutedFunc(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP())
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}
	routed := policy.Must(policy.New("login", spec, ip, policy.WithRoutes("POST /login")))
	routed2 := policy.Must(policy.New("login2", spec, ip, policy.WithRoutes("POST /register")))
	plain := policy.Must(policy.New("plain", spec, ip))
	if !routed.Routed() || plain.Routed() {
		t.Fatalf("Routed() = %v, %v; want true, false", routed.Routed(), plain.Routed())
	}
	var calls int
	count := policy.WithUnroutedFunc(func(*http.Request) { calls++ })
	pattern := ""
	patternOpt := policy.WithPatternFunc(func(*http.Request) string { return pattern })
	s, err := policy.NewSet([]*policy.Policy{plain, routed, routed2}, count, patternOpt)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/login", nil)
	if got := s.Match(r); got != 1 || calls != 1 {
		t.Errorf("unknown route: Match = %b, calls %d; want 1 (plain only), 1 call", got, calls)
	}
	pattern = "POST /login"
	if got := s.Match(r); got != 3 || calls != 1 {
		t.Errorf("known route: Match = %b, calls %d; want 11, still 1 call", got, calls)
	}
	s, err = policy.NewSet([]*policy.Policy{plain}, count, policy.WithPatternFunc(func(*http.Request) string { return "" }))
	if err != nil {
		t.Fatal(err)
	}
	if s.Match(r); calls != 1 {
		t.Errorf("no policy with routes: calls %d, want still 1", calls)
	}
	if _, err := policy.NewSet([]*policy.Policy{plain}, policy.WithUnroutedFunc(nil)); err == nil {
		t.Error("WithUnroutedFunc(nil): no error")
	}
}

// TestMatchRoute: MatchRoute returns Match's mask and reports a request
// unrouted exactly when WithUnroutedFunc would be called for it, with or
// without that function: a policy with routes needed the pattern and the
// pattern function did not know it. A Set none of whose policies has
// routes, or one that knew the route, reports none.
func TestMatchRoute(t *testing.T) {
	ip := keyfunc.Must(keyfunc.IP())
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}
	routed := policy.Must(policy.New("login", spec, ip, policy.WithRoutes("POST /login")))
	plain := policy.Must(policy.New("plain", spec, ip))
	pattern := ""
	patternOpt := policy.WithPatternFunc(func(*http.Request) string { return pattern })
	r := httptest.NewRequest("POST", "/login", nil)
	for _, withFunc := range []bool{false, true} {
		opts := []policy.SetOption{patternOpt}
		calls := 0
		if withFunc {
			opts = append(opts, policy.WithUnroutedFunc(func(*http.Request) { calls++ }))
		}
		s, err := policy.NewSet([]*policy.Policy{plain, routed}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		pattern = ""
		if mask, unrouted := s.MatchRoute(r); mask != 1 || !unrouted || mask != s.Match(r) {
			t.Errorf("func %v, unknown route: MatchRoute = %b, %v; want 1 (plain only), true, as Match", withFunc, mask, unrouted)
		}
		if withFunc && calls != 2 {
			t.Errorf("unknown route: the function was called %d times for MatchRoute and Match; want 2", calls)
		}
		pattern = "POST /login"
		if mask, unrouted := s.MatchRoute(r); mask != 3 || unrouted {
			t.Errorf("func %v, known route: MatchRoute = %b, %v; want 11, false", withFunc, mask, unrouted)
		}
		plainOnly, err := policy.NewSet([]*policy.Policy{plain}, policy.WithPatternFunc(func(*http.Request) string { return "" }))
		if err != nil {
			t.Fatal(err)
		}
		if mask, unrouted := plainOnly.MatchRoute(r); mask != 1 || unrouted {
			t.Errorf("no policy with routes: MatchRoute = %b, %v; want 1, false", mask, unrouted)
		}
	}
}
