package policy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigRouteKeyWithFallback: a configuration's route key with a
// fallback (key: [route, header:X-A], fallback: ip) reads the route that the Set's
// pattern function finds before routing, as key: route alone does. Under
// a limiter around the whole ServeMux (ServeMuxPattern) the route part
// found no route (the mux had not run), keyfunc.FirstOf fell back past it,
// and every request was keyed by its client's address: a per-route limit
// became, silently, a per-client one.
func TestConfigRouteKeyWithFallback(t *testing.T) {
	cfg := mustParse(t, "policies:\n"+
		"  - {name: per-route, limit: 100, window: 1m, key: [route, 'header:X-A'], fallback: ip}\n"+
		"  - {name: route-only, limit: 100, window: 1m, key: route}\n", "route.yaml")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(http.ResponseWriter, *http.Request) {})
	s, err := policy.NewSet(cfg.Policies, policy.WithPatternFunc(policy.ServeMuxPattern(mux)))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	limiter := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		keys = append(keys, res.Key(0), res.Key(1))
		mux.ServeHTTP(w, r)
	})
	for _, c := range []struct{ remote, target string }{
		{"192.0.2.1:1000", "/users/1"},
		{"198.51.100.7:2000", "/users/2"},
	} {
		r := httptest.NewRequest("GET", c.target, nil)
		r.RemoteAddr = c.remote
		r.Header.Set("X-A", "a")
		limiter.ServeHTTP(httptest.NewRecorder(), r)
	}
	// The joined key digests the route; both clients get the same key, the
	// key's (0), not the fallback's (1, keyed by each client's address).
	if len(keys) != 4 || !strings.HasPrefix(keys[0], "per-route:0:") || keys[2] != keys[0] ||
		keys[1] != "route-only:GET /users/{id}" || keys[3] != keys[1] {
		t.Errorf("keys = %q; want the per-route key (per-route:0:...) the same for both clients, and route-only:GET /users/{id} twice", keys)
	}
}
