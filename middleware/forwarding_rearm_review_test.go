package middleware_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestForwardingCheckRearmsWhenProxiesChange: the check reports once per
// set of trusted proxies. A reload that keeps them keeps the check quiet;
// one that declares others is a new setup, checked again, and a proxy it
// still misses is reported again. Before, after the first report the check
// stayed quiet for the middleware's life: an operator who "fixed"
// trusted_proxies with another wrong prefix heard nothing and took the
// silence for a fix, while every client behind the proxy shared one limit.
func TestForwardingCheckRearmsWhenProxiesChange(t *testing.T) {
	store, _ := newStore(t)
	got := new(reports)
	m, err := middleware.FromConfig(store, mustConfig(t, wrongPrefixConfig), got.handler())
	if err != nil {
		t.Fatal(err)
	}
	h := routedBy("chi", m)
	serve := func() {
		req := httptest.NewRequest("GET", "/", nil)
		req.RemoteAddr = "10.0.0.5:41000" // the proxy, outside 10.1.0.0/16
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	apply := func(cfg string) {
		t.Helper()
		if err := m.ApplyConfig(mustConfig(t, cfg)); err != nil {
			t.Fatal(err)
		}
	}
	want := func(step string, n int, naming string) {
		t.Helper()
		reps := got.forwarding()
		if len(reps) != n || n > 0 && !strings.Contains(reps[n-1].Error(), naming) {
			t.Fatalf("%s: reports %v; want %d, the last naming %s", step, reps, n, naming)
		}
	}
	serve()
	serve()
	want("two requests through the missed proxy", 1, "10.1.0.0/16")
	apply(wrongPrefixConfig)
	serve()
	want("after a reload with the same proxies", 1, "10.1.0.0/16")
	apply(strings.Replace(wrongPrefixConfig, "10.1.0.0/16", "10.2.0.0/16", 1))
	serve()
	serve()
	want("after a reload with other proxies that miss it too", 2, "10.2.0.0/16")
	apply(strings.Replace(wrongPrefixConfig, "10.1.0.0/16", "10.0.0.0/16", 1))
	serve()
	want("after a reload that trusts the proxy", 2, "10.2.0.0/16")
}
