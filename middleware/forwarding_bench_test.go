package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// BenchmarkForwardedRequest measures a request through a proxy (a
// forwarding header from a private peer, 10.1.0.4) to a middleware with
// one policy, with the forwarding check on by default (told of no proxy)
// and off, for two keys the check never reports: a user's, which it used
// to ask about every such request, and a client IP read from the proxy's
// header (keyfunc.TrustedProxies), which it remembers reading after the
// first. The user key is the cheapest there is (keyfunc.User), so the
// difference is the check's own work; an application's key (a JWT's
// signature checked) multiplies what the check calls it for.
func BenchmarkForwardedRequest(b *testing.B) {
	trusting := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.1.0.0/16"))))
	for _, key := range []struct {
		name string
		key  keyfunc.Func
	}{
		{"user", keyfunc.User()},
		{"trusted-ip", trusting},
	} {
		for _, check := range []struct {
			name string
			opts []middleware.Option
		}{
			{"on", nil},
			{"off", []middleware.Option{middleware.CheckForwarding(false)}},
		} {
			b.Run("key="+key.name+"/check="+check.name, func(b *testing.B) {
				store, err := algorithms.NewMemoryStore()
				if err != nil {
					b.Fatal(err)
				}
				defer store.Close()
				p := policy.Must(policy.PerMinute("per-client", 1_000_000_000, key.key))
				m := middleware.MustNew(store, []*policy.Policy{p}, append([]middleware.Option{middleware.WithoutContext()}, check.opts...)...)
				h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
				r := httptest.NewRequest("GET", "/", nil)
				r.RemoteAddr = "10.1.0.4:41000"
				r.Header.Set("X-Forwarded-For", "198.51.100.7")
				r = r.WithContext(keyfunc.WithUser(r.Context(), "ann"))
				w := httptest.NewRecorder()
				b.ReportAllocs()
				for b.Loop() {
					h.ServeHTTP(w, r)
				}
			})
		}
	}
}
