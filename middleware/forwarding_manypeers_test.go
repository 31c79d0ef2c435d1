package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestForwardingCheckManyProxiesBounded: a key trusting the proxies
// (correct) behind more proxy addresses than the check remembers (8: a
// CDN's edges, a balancer's nodes) and a check told of none: each request
// from a peer the memory had just let go was asked about again (the
// request copied twice, the key called three more times), for good: 4
// key calls per request from 9 proxies in turn. A key found reading the
// headers of a peer the memory has no room for now counts against the
// policy's budget of probes: past it, a request calls the key once, for
// its decision.
func TestForwardingCheckManyProxiesBounded(t *testing.T) {
	store, _ := newStore(t)
	var got reports
	var calls atomic.Int64
	trusted := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))))
	key := func(r *http.Request) (string, error) { calls.Add(1); return trusted(r) }
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1e9, time.Minute, key)}, got.handler())
	h := m.Handler(ok)
	const peers, requests = 9, 900
	serve := func(i int) {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = fmt.Sprintf("10.0.0.%d:443", 1+i%peers)
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i%200))
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	for i := range requests / 2 {
		serve(i)
	}
	before := calls.Load()
	for i := requests / 2; i < requests; i++ {
		serve(i)
	}
	if n := calls.Load() - before; n != requests/2 {
		t.Errorf("requests %d to %d from %d proxies called the key %d times, want %d (once each, for the decision)", requests/2+1, requests, peers, n, requests/2)
	}
	if w := got.forwarding(); len(w) != 0 {
		t.Errorf("reported a key that trusts the proxies: %v", w)
	}
}
