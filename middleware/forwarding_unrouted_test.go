package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForwardingCheckAsksRouteKeysOfUnroutedRequests: before routing,
// with a pattern function of its own, the middleware keys a request that
// no route matches (a scanner's 404) by policy.NoRoute as its route, so
// that an ip-and-route key trusting no proxy gives every client behind
// the proxy one limit there too. The forwarding check handed such a key
// no route, found it failing, and took it for a key of no peer's: the
// request went unreported and counted against the key's budget, so that
// after 32 of them (a scan through the proxy at start-up) the key was
// asked no more, and the misconfiguration was never reported. It asks
// the key as the middleware does now: the first such request is
// reported; a key trusting the proxy is not.
func TestForwardingCheckAsksRouteKeysOfUnroutedRequests(t *testing.T) {
	for _, tc := range []struct {
		name  string
		yaml  string
		warns int
	}{
		{"trusting no proxy", "policies:\n  - {name: per-ip-route, limit: 1, window: 1m, key: [ip, route]}\n", 1},
		{"trusting the proxy", "trusted_proxies: [10.0.0.0/8]\npolicies:\n  - {name: per-ip-route, limit: 1, window: 1m, key: [ip, route]}\n", 0},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(mux+"/"+tc.name, func(t *testing.T) {
				store, _ := newStore(t)
				var got reports
				h := itemsRouter(t, mux, store, tc.yaml, got.handler())
				send := func(path, client string) int {
					req := httptest.NewRequest("GET", path, nil)
					req.RemoteAddr = "10.0.0.5:41000"
					req.Header.Set("X-Forwarded-For", client)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					return w.Code
				}
				// Two clients scanning through the proxy: the second one's
				// first 404 is the first's limit when the key is the peer's.
				a := send("/wp-login.php", "198.51.100.1")
				b := send("/wp-login.php", "198.51.100.2")
				shared := b == http.StatusTooManyRequests
				if want := tc.warns > 0; shared != want {
					t.Fatalf("two clients' 404s: %d, %d; shared limit %v, want %v", a, b, shared, want)
				}
				for i := range 40 {
					send(fmt.Sprintf("/scan/%d", i), fmt.Sprintf("198.51.100.%d", 10+i))
				}
				send("/items/7", "198.51.100.99")
				if reps := got.forwarding(); len(reps) != tc.warns {
					t.Errorf("%d forwarding reports, want %d: %v", len(reps), tc.warns, reps)
				}
			})
		}
	}
}

// TestForwardingCheckRouteKeyBehindFallback: a configuration's key with a
// route part and a fallback (key: [user, route], fallback: [ip]) keys a
// signed-in user by user and route, before routing too (the middleware
// hands it the route), never by the fallback. The check, which asks the
// key on the request as it is, must not take the fallback's answer for
// the key's: a signed-in user's forwarded request is not reported; an
// anonymous one, which the fallback keys by the peer, is. (A guard: it
// passed before.)
func TestForwardingCheckRouteKeyBehindFallback(t *testing.T) {
	const yaml = "policies:\n  - {name: per-user-route, limit: 100, window: 1m, key: [user, route], fallback: [ip]}\n"
	for _, tc := range []struct {
		name  string
		user  string
		warns int
	}{
		{"signed in", "alice", 0},
		{"anonymous", "", 1},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(mux+"/"+tc.name, func(t *testing.T) {
				store, _ := newStore(t)
				var got reports
				auth := func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if u := r.Header.Get("X-User"); u != "" {
							r = r.WithContext(keyfunc.WithUser(r.Context(), u))
						}
						next.ServeHTTP(w, r)
					})
				}
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					m, err := middleware.FromConfig(store, mustConfig(t, yaml), got.handler(), middleware.WithPatternFunc(policy.ChiPattern(r)))
					if err != nil {
						t.Fatal(err)
					}
					r.Use(auth, m.Handler)
					r.Get("/items/{id}", ok)
					h = r
				} else {
					sm := http.NewServeMux()
					sm.Handle("GET /items/{id}", ok)
					m, err := middleware.FromConfig(store, mustConfig(t, yaml), got.handler(), middleware.WithPatternFunc(policy.ServeMuxPattern(sm)))
					if err != nil {
						t.Fatal(err)
					}
					h = auth(m.Handler(sm))
				}
				req := httptest.NewRequest("GET", "/items/7", nil)
				req.RemoteAddr = "10.0.0.5:41000"
				req.Header.Set("X-Forwarded-For", "198.51.100.7")
				if tc.user != "" {
					req.Header.Set("X-User", tc.user)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					t.Fatalf("status %d", w.Code)
				}
				if reps := got.forwarding(); len(reps) != tc.warns {
					t.Errorf("%d forwarding reports, want %d: %v", len(reps), tc.warns, reps)
				}
			})
		}
	}
}
