package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForwardingAppliedUpstreamWithPort: gorilla's ProxyHeaders, given
// Forwarded: for="[2001:db8::1]:4711", leaves RemoteAddr
// "[2001:db8::1]:4711" (see proxyHeaders), the form net/http gives a peer.
// The ip key reads the client from it (each client its own count), yet the
// check took it for the peer's and reported a shared limit. A RemoteAddr
// whose address is the client a forwarding header of the request names is
// now taken as rewritten further out, for IPv6 and IPv4 with a port; a
// real peer (the test server's loopback) naming another client is still
// reported. Through a real server and a real chi router.
func TestForwardingAppliedUpstreamWithPort(t *testing.T) {
	t.Run("IPv6", func(t *testing.T) {
		upstreamForwarding(t, proxyHeaders, "Forwarded", `for="[2001:db8:1::7]:4711";proto=https`, `for="[2001:db8:2::8]:4711";proto=https`)
	})
	t.Run("IPv4", func(t *testing.T) {
		upstreamForwarding(t, proxyHeaders, "Forwarded", `for="192.0.2.7:4711"`, `for="192.0.2.8:4711"`)
	})
	t.Run("X-Forwarded-For", func(t *testing.T) {
		upstreamForwarding(t, proxyHeaders, "X-Forwarded-For", "[2001:db8:1::7]:4711, 10.0.0.1", "[2001:db8:2::8]:4711, 10.0.0.1")
	})
	// The proxy hid the clients' ports (RFC 7239 section 6.3): ProxyHeaders
	// leaves "[2001:db8:1::7]:_p1", which net/http never writes.
	t.Run("IPv6_obfuscated_port", func(t *testing.T) {
		upstreamForwarding(t, proxyHeaders, "Forwarded", `for="[2001:db8:1::7]:_p1"`, `for="[2001:db8:2::8]:_p2";proto=https`)
	})
	t.Run("IPv4_obfuscated_port", func(t *testing.T) {
		upstreamForwarding(t, proxyHeaders, "Forwarded", `for="192.0.2.7:_hidden"`, `for="192.0.2.8:_hidden"`)
	})
}

// TestGorillaForwardedPortKey: behind gorilla's ProxyHeaders (emulated:
// proxyHeaders), Forwarded for="[2001:db8::1]:4711" is keyed by the
// client's address, 2001:db8::1 (IPv6Prefix 128), never with its port: the
// same client from another port counts against the same limit, another
// client from the same port against its own. No forwarding report is made.
// Through a real chi router.
func TestGorillaForwardedPortKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	ip := keyfunc.Must(keyfunc.IP(keyfunc.IPv6Prefix(128)))
	recording := func(r *http.Request) (string, error) {
		k, err := ip(r)
		mu.Lock()
		keys = append(keys, k)
		mu.Unlock()
		return k, err
	}
	store, _ := newStore(t)
	var got reports
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 100, time.Minute, recording)}, got.handler(), middleware.CheckForwarding(true))
	r := chi.NewRouter()
	r.Use(proxyHeaders, m.Handler)
	r.Get("/", ok)
	for i, tc := range []struct {
		forwarded, key, rateLimit string
	}{
		{`for="[2001:db8::1]:4711"`, "2001:db8::1", `"per-ip";r=99;`},
		{`for="[2001:db8::1]:4712";proto=https`, "2001:db8::1", `"per-ip";r=98;`},
		{`For="[2001:db8::2]:4711", for=10.0.0.1`, "2001:db8::2", `"per-ip";r=99;`},
	} {
		w := serve(r, "GET", "/", "Forwarded", tc.forwarded)
		if got := w.Header().Get("RateLimit"); !strings.HasPrefix(got, tc.rateLimit) {
			t.Errorf("request %d (%s): RateLimit = %q, want %s...", i, tc.forwarded, got, tc.rateLimit)
		}
		mu.Lock()
		if k := keys[len(keys)-1]; k != tc.key {
			t.Errorf("request %d (%s): key %q, want %q", i, tc.forwarded, k, tc.key)
		}
		mu.Unlock()
	}
	if reps := got.forwarding(); len(reps) != 0 {
		t.Errorf("%d forwarding reports, want 0: %v", len(reps), reps)
	}
	// Without ProxyHeaders, the peer is httptest's 192.0.2.1:1234: reported.
	direct := chi.NewRouter()
	direct.Use(m.Handler)
	direct.Get("/", ok)
	direct.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Forwarded", `for="[2001:db8::1]:4711"`)
	direct.ServeHTTP(httptest.NewRecorder(), req)
	if reps := got.forwarding(); len(reps) != 1 {
		t.Errorf("direct peer: %d forwarding reports, want 1: %v", len(reps), reps)
	}
}
