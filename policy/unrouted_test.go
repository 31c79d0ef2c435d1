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
