package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForwardingCheckAsksTheKeys: the forwarding check, on by default in
// code, warned behind a proxy whenever it had not been told the proxies
// itself: when the ip key trusts the proxy (keyfunc.TrustedProxies) and
// the check was given no prefixes, or other ones (CheckForwardingFrom),
// and when no policy keys by client IP at all (a user or an API key).
// None of those buckets clients by the proxy's address, and the warning
// told the user to fix what was right. It now warns only when a policy
// that applies to the request keys it by the peer's address, ignoring
// the forwarding header: the key trusting no proxy, or another proxy,
// and a user-or-IP key for an anonymous request. Through a real server
// (the peer, 127.0.0.1, being the proxy), behind chi and a ServeMux.
func TestForwardingCheckAsksTheKeys(t *testing.T) {
	loopback := netip.MustParsePrefix("127.0.0.0/8")
	other := netip.MustParsePrefix("10.0.0.0/8")
	trustsProxy := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(loopback)))
	trustsOther := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(other)))
	apiKey := keyfunc.Must(keyfunc.Header("X-Api-Key"))
	userOrIP := keyfunc.Must(keyfunc.FirstOf(keyfunc.User(), peerIP))
	for _, tc := range []struct {
		name  string
		key   keyfunc.Func
		opts  []middleware.Option
		user  string // set by a middleware further out
		warns int
	}{
		// Needless before: nothing buckets clients by the proxy.
		{name: "the key trusts the proxy, the check was told none", key: trustsProxy},
		{name: "the key trusts the proxy, the check was told others", key: trustsProxy,
			opts: []middleware.Option{middleware.CheckForwardingFrom("X-Forwarded-For", other)}},
		{name: "a user key", key: keyfunc.User(), user: "ann"},
		{name: "an API key", key: apiKey},
		{name: "user or IP, a user", key: userOrIP, user: "ann"},
		// Still told: the policy keys every client by the proxy's address.
		{name: "the key trusts no proxy", key: peerIP, warns: 1},
		{name: "the key trusts another proxy", key: trustsOther, warns: 1},
		{name: "user or IP, anonymous", key: userOrIP, warns: 1},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(mux+"/"+tc.name, func(t *testing.T) {
				store, _ := newStore(t)
				var got reports
				p := fixed("per-client", 100, time.Minute, tc.key)
				m := middleware.MustNew(store, []*policy.Policy{p}, append([]middleware.Option{got.handler()}, tc.opts...)...)
				withUser := func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if tc.user != "" {
							r = r.WithContext(keyfunc.WithUser(r.Context(), tc.user))
						}
						next.ServeHTTP(w, r)
					})
				}
				var h http.Handler
				if mux == "chi" {
					r := chi.NewRouter()
					r.Use(withUser, m.Handler)
					r.Get("/", ok)
					h = r
				} else {
					sm := http.NewServeMux()
					sm.Handle("GET /", m.Handler(ok))
					h = withUser(sm)
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				for _, client := range []string{"198.51.100.7", "198.51.100.8"} {
					req, err := http.NewRequest("GET", srv.URL+"/", nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("X-Forwarded-For", client)
					req.Header.Set("X-Api-Key", "k-"+client)
					resp, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d", resp.StatusCode)
					}
				}
				reps := got.forwarding()
				if len(reps) != tc.warns {
					t.Fatalf("%d forwarding reports, want %d: %v", len(reps), tc.warns, reps)
				}
				if tc.warns > 0 && !strings.Contains(reps[0].Error(), `"per-client"`) {
					t.Errorf("report %q does not name the policy keying by the peer", reps[0])
				}
			})
		}
	}
}

// TestForwardingCheckAsksRouteKeysBeforeRouting: a key with a route part,
// in a middleware that runs before the router with a pattern function
// (around a whole ServeMux, in chi's top-level r.Use), finds no route on
// the request itself; the middleware hands it the route its pattern
// function finds, and so does the check, which asks the key the same
// way: an ip-and-route key trusting no proxy is reported, one trusting
// it is not.
func TestForwardingCheckAsksRouteKeysBeforeRouting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		yaml  string
		warns int
	}{
		{"trusting no proxy", "policies:\n  - {name: per-ip-route, limit: 100, window: 1m, key: [ip, route]}\n", 1},
		{"trusting the proxy", "trusted_proxies: [127.0.0.0/8]\npolicies:\n  - {name: per-ip-route, limit: 100, window: 1m, key: [ip, route]}\n", 0},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(mux+"/"+tc.name, func(t *testing.T) {
				store, _ := newStore(t)
				var got reports
				h := itemsRouter(t, mux, store, tc.yaml, got.handler())
				srv := httptest.NewServer(h)
				defer srv.Close()
				req, err := http.NewRequest("GET", srv.URL+"/items/7", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("X-Forwarded-For", "198.51.100.7")
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				if reps := got.forwarding(); len(reps) != tc.warns {
					t.Errorf("%d forwarding reports, want %d: %v", len(reps), tc.warns, reps)
				}
			})
		}
	}
}

// itemsRouter is a chi router (mux "chi") or a ServeMux (mux "ServeMux")
// with the one route GET /items/{id}, answered by ok, behind a middleware
// made from the configuration yaml with the router's pattern function and
// the option hook (the error hook): in chi's r.Use, around the whole ServeMux.
func itemsRouter(t *testing.T, mux string, store algorithms.Store, yaml string, hook middleware.Option) http.Handler {
	t.Helper()
	if mux == "chi" {
		r := chi.NewRouter()
		m, err := middleware.FromConfig(store, mustConfig(t, yaml), hook, middleware.WithPatternFunc(policy.ChiPattern(r)))
		if err != nil {
			t.Fatal(err)
		}
		r.Use(m.Handler)
		r.Get("/items/{id}", ok)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("GET /items/{id}", ok)
	m, err := middleware.FromConfig(store, mustConfig(t, yaml), hook, middleware.WithPatternFunc(policy.ServeMuxPattern(sm)))
	if err != nil {
		t.Fatal(err)
	}
	return m.Handler(sm)
}
