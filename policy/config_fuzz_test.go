package policy_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// FuzzParseConfig feeds arbitrary YAML and JSON to the loader: it must
// never panic, every error must be a *ConfigError (with a position when it
// names a field), and every Config it returns must hold valid policies. The seed corpus is in
// testdata/fuzz/FuzzParseConfig; run with
//
//	go test ./policy -run '^$' -fuzz FuzzParseConfig -fuzztime 60s
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(fullYAML), "c.yaml")
	f.Add([]byte(fullJSON), "c.json")
	f.Add([]byte("policies:\n  - name: a\n    limit: 1\n    window: 1s\n"), "c")
	f.Add([]byte("ipv6_prefix: 0\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n"), "c.yaml")
	f.Add([]byte("trusted_hops: 2\nip_source: forwarded\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n"), "c.yaml")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		cfg, err := policy.ParseConfig(data, name)
		if err != nil {
			if cfg != nil {
				t.Fatalf("ParseConfig returned both a Config and %v", err)
			}
			if !errors.Is(err, policy.ErrConfig) || len(policy.ConfigErrors(err)) == 0 {
				t.Fatalf("error %v is not a ConfigError", err)
			}
			for _, ce := range policy.ConfigErrors(err) {
				if ce.Field != "" && ce.Line == 0 {
					t.Fatalf("error %q names a field but not where it is", ce)
				}
			}
			return
		}
		if len(cfg.Policies) == 0 || len(cfg.Policies) != len(cfg.Definitions) {
			t.Fatalf("Config with %d policies and %d definitions", len(cfg.Policies), len(cfg.Definitions))
		}
		for _, p := range cfg.Policies {
			if err := p.Spec().Validate(); err != nil {
				t.Fatalf("policy %s has an invalid Spec: %v", p.Name(), err)
			}
		}
		if _, err := policy.NewSet(cfg.Policies); err != nil {
			t.Fatalf("NewSet(loaded policies) = %v", err)
		}
	})
}
