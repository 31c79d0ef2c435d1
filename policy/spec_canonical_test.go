package policy_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestBurstAtLimitIsTheDefault: a token_bucket or leaky_bucket whose
// burst is written out at its limit is the bucket whose burst defaults
// to it (algorithms.Spec: "0 means Limit"), and the policy has one Spec
// for both spellings (the stores key their state by Spec): given in the
// Spec, by WithBurst, in a configuration file, by WithGuard, or reached
// by WithLimit scaling a burst onto the new limit. A burst that differs
// from the limit is kept as written.
func TestBurstAtLimitIsTheDefault(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		defaulted := algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Minute}
		explicit := defaulted
		explicit.Burst = 10
		for what, p := range map[string]*policy.Policy{
			"Spec.Burst":                     policy.Must(policy.New("p", explicit, remoteKey)),
			"WithBurst":                      policy.Must(policy.New("p", defaulted, remoteKey, policy.WithBurst(10))),
			"configuration":                  loadOne(t, "policies:\n  - name: p\n    algorithm: "+string(kind)+"\n    limit: 10\n    window: 1m\n    burst: 10\n"),
			"WithLimit(5) of burst 11 at 10": policy.Must(policy.Must(policy.New("p", algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Minute, Burst: 11}, remoteKey)).WithLimit(5)),
		} {
			want := defaulted
			if what == "WithLimit(5) of burst 11 at 10" {
				want.Limit = 5
			}
			if got := p.Spec(); got != want {
				t.Errorf("%s, %s: Spec %v (%#v), want %v", kind, what, got, got, want)
			}
			if p.Capacity() != want.Limit {
				t.Errorf("%s, %s: capacity %d, want %d", kind, what, p.Capacity(), want.Limit)
			}
		}
		base := policy.Must(policy.New("p", algorithms.Spec{Algorithm: kind, Limit: 10, Window: time.Hour}, remoteKey))
		g := policy.Must(base.WithGuard(explicit))
		if gs := g.Guards(); len(gs) != 1 || gs[0] != defaulted {
			t.Errorf("%s: WithGuard(%v): guards %v, want [%v]", kind, explicit, gs, defaulted)
		}
		kept := defaulted
		kept.Burst = 20
		if got := policy.Must(policy.New("p", kept, remoteKey)).Spec(); got != kept {
			t.Errorf("%s: burst 20 at limit 10: Spec %v, want it as written", kind, got)
		}
	}
}

func loadOne(t *testing.T, yaml string) *policy.Policy {
	t.Helper()
	cfg, err := policy.ParseConfig([]byte(yaml), "ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Policies[0]
}
