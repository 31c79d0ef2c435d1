package middleware

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

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

// TestCheckForwardingSpentBudgetCostsNoAllocation: behind a proxy, a
// policy keyed by user was asked on every forwarded request, on a copy
// of it (an allocation), for as long as the check ran, which is for good
// (it never reports such a key). Once its key has been found not the
// peer's on maxProbes forwarded requests, the check asks it no more: a
// request costs the look-ups, no call of the key and no allocation.
func TestCheckForwardingSpentBudgetCostsNoAllocation(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var calls int
	key := func(r *http.Request) (string, error) {
		calls++
		return keyfunc.User()(r)
	}
	p := policy.Must(policy.PerMinute("per-user", 10, key))
	m, err := New(store, []*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	set := m.set.Load()
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.0.4:41000"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	r = r.WithContext(keyfunc.WithUser(r.Context(), "ann"))
	for range maxProbes {
		m.checkForwarding(r, set, 1)
	}
	if calls != 2*maxProbes {
		t.Errorf("%d probes called the key %d times, want %d", maxProbes, calls, 2*maxProbes)
	}
	calls = 0
	if got := testing.AllocsPerRun(100, func() { m.checkForwarding(r, set, 1) }); got != 0 {
		t.Errorf("%v allocations per request, want 0", got)
	}
	if calls != 0 {
		t.Errorf("the key was called %d times after the budget, want 0", calls)
	}
	if got := m.fwd.Load(); got != fwdChecking {
		t.Errorf("check state %d, want %d (checking)", got, fwdChecking)
	}
}

// TestCheckForwardingBudgetUnderConcurrency: goroutines checking
// forwarded requests at once ask a user key about maxProbes of them,
// plus at most one in flight in each other goroutine when the budget ran
// out; the counts are atomic (the race detector sees them).
func TestCheckForwardingBudgetUnderConcurrency(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var calls atomic.Int64
	key := func(r *http.Request) (string, error) {
		calls.Add(1)
		return keyfunc.User()(r)
	}
	m, err := New(store, []*policy.Policy{policy.Must(policy.PerMinute("per-user", 10, key))})
	if err != nil {
		t.Fatal(err)
	}
	set := m.set.Load()
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "10.1.0.4:41000"
			r.Header.Set("X-Forwarded-For", "198.51.100.7")
			r = r.WithContext(keyfunc.WithUser(r.Context(), "ann"))
			for range each {
				m.checkForwarding(r, set, 1)
			}
		})
	}
	wg.Wait()
	if got, most := calls.Load(), int64(2*(maxProbes+goroutines-1)); got > most {
		t.Errorf("%d requests called the key %d times, want at most %d", goroutines*each, got, most)
	}
	if rp := m.fwdRead.Load(); rp == nil || rp.probes == nil || rp.probes.spent.Load() != 1 {
		t.Errorf("the policy's budget is not recorded as spent")
	}
}

// TestCheckForwardingMemoryKeepsNoSetAlive: what the check remembers of
// a rule set, the peers whose headers its keys read and the probes of
// keys found not the peer's, holds the set weakly: a set replaced
// (SetLimit) is collected though the memory is still m.fwdRead's.
func TestCheckForwardingMemoryKeepsNoSetAlive(t *testing.T) {
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	trusting := keyfunc.Must(keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.1.0.0/16"))))
	m, err := New(store, []*policy.Policy{
		policy.Must(policy.PerMinute("per-user", 10, keyfunc.User())),
		policy.Must(policy.PerMinute("per-ip", 10, trusting)),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.0.4:41000"
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	r = r.WithContext(keyfunc.WithUser(r.Context(), "ann"))
	old := weak.Make(m.set.Load())
	m.checkForwarding(r, m.set.Load(), 3)
	if rp := m.fwdRead.Load(); !rp.of(old.Value()) || rp.read(netip.MustParseAddr("10.1.0.4")) != 2 || rp.probes.n[0].Load() != 1 {
		t.Fatal("the check remembered neither the proxy nor the probe")
	}
	if err := m.SetLimit("per-user", 5); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && old.Value() != nil; i++ {
		runtime.GC()
	}
	if old.Value() != nil {
		t.Error("the replaced set is still alive")
	}
}
