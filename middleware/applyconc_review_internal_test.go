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
	m, err := FromConfig(store, direct)
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20000
	mixed := 0
	for range rounds {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, cfg := range []*policy.Config{hops, direct} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if err := m.ApplyConfig(cfg); err != nil {
					t.Error(err)
				}
			}()
		}
		close(start)
		wg.Wait()
		px := m.fwdProxies.Load()
		behind := m.Set().Policy(0).Name() == "behind-proxy"
		if px.hops != behind || (m.fwd.Load() == fwdOff) != behind {
			mixed++
		}
	}
	if mixed > 0 {
		t.Errorf("%d of %d rounds of two concurrent ApplyConfig calls left the policies of one configuration with the forwarding setup of the other", mixed, rounds)
	}
}
