package middleware

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCheckForwardingReadKeysCostNoAllocation: behind a proxy its keys
// trust, a middleware whose check was told of no proxy never reports,
// so the check runs on every request; once it has seen that the keys
// read the headers of that proxy, it does not ask them again (nor, for
// two proxies, either of them): a request costs the look-ups and
// allocates nothing.
func TestCheckForwardingReadKeysCostNoAllocation(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.1.0.0/16"))))
	p := policy.Must(policy.PerMinute("per-ip", 10, key))
	m, err := New(store, []*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	set := m.set.Load()
	for _, proxy := range []string{"10.1.0.4:41000", "10.1.7.9:41000"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = proxy
		r.Header.Set("X-Forwarded-For", "198.51.100.7")
		m.checkForwarding(r, set, 1) // asks the keys
		if got := testing.AllocsPerRun(100, func() { m.checkForwarding(r, set, 1) }); got != 0 {
			t.Errorf("%s: %v allocations per request, want 0", proxy, got)
		}
		if got := m.fwd.Load(); got != fwdChecking {
			t.Errorf("%s: check state %d, want %d (checking)", proxy, got, fwdChecking)
		}
	}
	// Rules replaced: the new set's keys are asked again.
	if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.Per("per-ip", 10, time.Hour, keyfunc.Must(keyfunc.IP())))}); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.0.4:41000"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	var told error
	m.onError = func(_ *http.Request, err error) { told = err }
	m.checkForwarding(r, m.set.Load(), 1)
	if told == nil || m.fwd.Load() != fwdTold {
		t.Errorf("a key trusting no proxy, under the new rules: told %v, state %d", told, m.fwd.Load())
	}
}
