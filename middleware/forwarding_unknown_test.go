package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestForwardedUnknownClientIsNoClientIP: behind a trusted proxy that
// writes Forwarded: for=unknown (RFC 7239 section 6.2) or an obfuscated
// identifier (for=_hidden, section 6.3), both valid, the error handler
// heard "malformed entry in a trusted forwarding header". The client
// cannot be identified at that hop: the ip key now fails as for a request
// without a client address, ErrNoClientIP saying the client is unknown or
// obfuscated, and the policy's key action (400) or declared fallback (the
// X-Tenant header) decides. Under trusted_hops, such a hop right of the
// client's is one of the counted proxies and is passed over. Through a
// real server, behind chi and behind a ServeMux.
func TestForwardedUnknownClientIsNoClientIP(t *testing.T) {
	const proxied = "trusted_proxies: [127.0.0.0/8]\nip_source: forwarded\n"
	const pol = "policies:\n  - name: per-ip\n    limit: 1\n    window: 1m\n"
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, forwarded := range []string{"for=unknown", "for=_hidden", `for=192.0.2.9, for="_p:_q"`} {
			t.Run(mux+" "+forwarded, func(t *testing.T) {
				get := func(srv *httptest.Server, kv ...string) int {
					t.Helper()
					req, err := http.NewRequest("GET", srv.URL+"/", nil)
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Forwarded", forwarded)
					for i := 0; i+1 < len(kv); i += 2 {
						req.Header.Set(kv[i], kv[i+1])
					}
					resp, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					return resp.StatusCode
				}
				serve := func(yaml string) (*httptest.Server, *reports) {
					store, _ := newStore(t)
					var got reports
					m, err := middleware.FromConfig(store, mustConfig(t, yaml), got.handler())
					if err != nil {
						t.Fatal(err)
					}
					srv := httptest.NewServer(routedBy(mux, m))
					t.Cleanup(srv.Close)
					return srv, &got
				}

				// No fallback: the key action, 400, with the reason told.
				srv, got := serve(proxied + pol)
				if code := get(srv); code != http.StatusBadRequest {
					t.Errorf("no fallback: %d, want 400", code)
				}
				errs := got.of(keyfunc.ErrNoClientIP)
				if len(errs) != 1 || strings.Contains(errs[0].Error(), "malformed") || !strings.Contains(errs[0].Error(), "unknown or obfuscated") {
					t.Errorf("no fallback: error handler heard %v; want one ErrNoClientIP saying the client is unknown or obfuscated, not malformed", got.errs)
				}

				// A fallback declared: keyed by X-Tenant, one limit each.
				srv, got = serve(proxied + pol + "    fallback: [header:X-Tenant]\n")
				codes := []int{get(srv, "X-Tenant", "acme"), get(srv, "X-Tenant", "acme"), get(srv, "X-Tenant", "other")}
				if codes[0] != 200 || codes[1] != 429 || codes[2] != 200 {
					t.Errorf("fallback: acme, acme, other answered %v; want 200, 429, 200", codes)
				}
				if len(got.errs) != 0 {
					t.Errorf("fallback: error handler heard %v; want nothing", got.errs)
				}
			})
		}
		// trusted_hops: 2: the nearest proxy's unknown peer is one of the
		// counted proxies; the client is the entry left of it.
		t.Run(mux+" trusted_hops", func(t *testing.T) {
			store, _ := newStore(t)
			var got reports
			m, err := middleware.FromConfig(store, mustConfig(t, "trusted_hops: 2\nip_source: forwarded\npolicies:\n  - {name: per-ip, limit: 1, window: 1m}\n"), got.handler())
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(routedBy(mux, m))
			defer srv.Close()
			var codes []int
			for _, client := range []string{"192.0.2.9", "192.0.2.9", "192.0.2.10"} {
				req, _ := http.NewRequest("GET", srv.URL+"/", nil)
				req.Header.Set("Forwarded", "for="+client+", for=unknown")
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				codes = append(codes, resp.StatusCode)
			}
			if codes[0] != 200 || codes[1] != 429 || codes[2] != 200 || len(got.errs) != 0 {
				t.Errorf("clients 192.0.2.9, 192.0.2.9, 192.0.2.10 answered %v, error handler heard %v; want 200, 429, 200 and nothing", codes, got.errs)
			}
		})
	}
}
