package middleware

import (
	"sync"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConcurrentApplyConfigConsistent: ApplyConfig is safe for concurrent
// use, as the Middleware is: two configurations applied at once (a
// Watcher's reload and an operator's call) leave the middleware wholly
// under one of them. ApplyConfig swapped the policies under the rules'
// lock but followed the configuration's forwarding setup (its proxies,
// the check on or off) after releasing it, so the policies of one could
// be left with the forwarding setup of the other: the check off, by a
// configuration of trusted_hops, under the ip keys of one that declares
// no proxy, whose forwarded requests then went unreported.
//
// The test does not wait for the scheduler to interleave the calls (20,000
// rounds of two goroutines found the broken order in about 3 of them on
// two cores, and never with GOMAXPROCS=1): a hook (followHook) stops the
// first call between its policies and its forwarding setup and starts the
// second there. When the first call does not hold the rules' lock at that
// point, the broken order, the second runs whole in the gap; else it
// waits for the first to finish, as it must.
func TestConcurrentApplyConfigConsistent(t *testing.T) {
	parse := func(yaml string) *policy.Config {
		cfg, err := policy.ParseConfig([]byte(yaml), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	hops := parse("trusted_hops: 1\npolicies:\n  - {name: behind-proxy, limit: 10, window: 1m}\n")
	direct := parse("policies:\n  - {name: direct, limit: 10, window: 1m}\n")
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	// under reports which configuration m is under, and whether its
	// policies and its forwarding setup agree.
	under := func(m *Middleware) (behind, consistent bool) {
		behind = m.Set().Policy(0).Name() == "behind-proxy"
		px := m.fwdProxies.Load()
		return behind, px.hops == behind && (m.fwd.Load() == fwdOff) == behind
	}

	for _, tc := range []struct {
		name          string
		first, second *policy.Config
	}{
		{"trusted_hops, then no proxy in its gap", hops, direct},
		{"no proxy, then trusted_hops in its gap", direct, hops},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := FromConfig(store, tc.first)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.ApplyConfig(tc.second); err != nil { // not the one the first call applies
				t.Fatal(err)
			}
			second := make(chan error, 1)
			m.followHook = func() {
				m.followHook = nil // the second call runs without it
				// Whether this call holds the rules' lock, asked before
				// the second call can take it.
				locked := !m.rules.mu.TryLock()
				if !locked {
					m.rules.mu.Unlock()
				}
				go func() { second <- m.ApplyConfig(tc.second) }()
				if !locked {
					// Nothing keeps the second call out of the gap:
					// it runs there, whole.
					if err := <-second; err != nil {
						t.Error(err)
					}
					second <- nil
				}
			}
			if err := m.ApplyConfig(tc.first); err != nil {
				t.Fatal(err)
			}
			if err := <-second; err != nil {
				t.Fatal(err)
			}
			behind, consistent := under(m)
			if !consistent {
				t.Errorf("the policies of one configuration (behind-proxy: %v) left with the forwarding setup of the other (hops %v, check off %v)",
					behind, m.fwdProxies.Load().hops, m.fwd.Load() == fwdOff)
			}
			if want := tc.second == hops; behind != want {
				t.Errorf("under the policies of the first configuration applied, want the second's: it came after")
			}
		})
	}

	// Calls left to the scheduler, for the race detector: each round
	// ends under one configuration whole.
	m, err := FromConfig(store, direct)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, cfg := range []*policy.Config{hops, direct} {
			wg.Go(func() {
				<-start
				if err := m.ApplyConfig(cfg); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if behind, consistent := under(m); !consistent {
			t.Fatalf("two concurrent ApplyConfig calls left the policies of one configuration (behind-proxy: %v) with the forwarding setup of the other", behind)
		}
	}
}
