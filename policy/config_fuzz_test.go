package policy_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// FuzzParseConfig feeds arbitrary YAML and JSON to the loader: it must
// never panic, every error must be a *ConfigError (with a position when it
// names a field), and every Config it returns must hold valid policies,
// described by its Definitions: written back out (see rewrite), as JSON
// and as YAML, they load as the same Config. The seed corpus is in
// testdata/fuzz/FuzzParseConfig; run with
//
//	go test ./policy -run '^$' -fuzz FuzzParseConfig -fuzztime 60s
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(fullYAML), "c.yaml")
	f.Add([]byte(fullJSON), "c.json")
	f.Add([]byte("policies:\n  - name: a\n    limit: 1\n    window: 1s\n"), "c")
	f.Add([]byte("ipv6_prefix: 0\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n"), "c.yaml")
	f.Add([]byte("trusted_hops: 2\nip_source: forwarded\npolicies:\n  - name: a\n    limit: 1\n    window: 1s\n"), "c.yaml")
	f.Add([]byte("policies:\n  - name: a\n    limit: 1_000\n    window: 1d\n    key: [header:X-K, ip]\n    fallback: [[cookie:s], user]\n    routes: [\"GET\\t/x/{id}\", /files/{p...}]\n"), "c.yml")
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\npolicies: [*b, *b]\n"), "c.yaml")
	f.Add([]byte("version: it's\npolicies: [[[{a: [\"]\"]}]]]\n"), "c.yaml")
	f.Add([]byte("%YAML 1.2\n--- # one\npolicies:\n  - {name: a, limit: 1, window: 1s}\n...\n---\n---\npolicies: []\n"), "c.yaml")
	f.Add([]byte("policies:\n  - {name: a, limit: 1, window: 1s}\n...\n---\n# end\n---\n"), "c.yaml")
	f.Add([]byte(`{"policies": [{"name": "a", "limit": 1, "window": "1s", "routes": ["/\udce9\ud83d\ude00\\udce9"]}]}`), "c.json")
	f.Add([]byte("policies:\n  - {name: a, limit: 1, window: 1s, routes: [\"/\\udce9\\U0000DCE9\"]}\n"), "c.yaml")
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
		for i, p := range cfg.Policies {
			if err := p.Spec().Validate(); err != nil {
				t.Fatalf("policy %s has an invalid Spec: %v", p.Name(), err)
			}
			if d := cfg.Definitions[i]; d.Name != p.Name() || d.Spec != p.Spec() || d.OnMissingKey != p.KeyAction() {
				t.Fatalf("Definition %d (%s %v %v) does not describe policy %s %v %v",
					i, d.Name, d.Spec, d.OnMissingKey, p.Name(), p.Spec(), p.KeyAction())
			}
		}
		if _, err := policy.NewSet(cfg.Policies); err != nil {
			t.Fatalf("NewSet(loaded policies) = %v", err)
		}
		out := rewrite(cfg)
		for _, again := range []string{"again.json", "again.yaml"} {
			cfg2, err := policy.ParseConfig(out, again)
			if err != nil {
				t.Fatalf("the Config written back out does not load as %s: %v\n%s", again, err, out)
			}
			if a, b := summary(cfg), summary(cfg2); !reflect.DeepEqual(a, b) {
				t.Fatalf("the Config written back out loads as %s differently:\n%+v\nthen\n%+v\nfrom\n%s", again, a, b, out)
			}
		}
	})
}

// rewrite writes cfg out as a JSON configuration file, each field as the
// Config and its Definitions hold it.
func rewrite(cfg *policy.Config) []byte {
	top := map[string]any{
		"version":      cfg.Version,
		"headers":      cfg.Headers,
		"failure_mode": cfg.FailureMode,
		"ipv6_prefix":  cfg.IPv6Prefix,
		"ipv4_prefix":  cfg.IPv4Prefix,
	}
	if cfg.FailureMode == policy.FailureClosed { // refused under the other modes
		top["failure_retry_after"] = cfg.FailureRetryAfter.String()
	}
	if len(cfg.TrustedProxies) > 0 {
		var ps []string
		for _, p := range cfg.TrustedProxies {
			ps = append(ps, p.String())
		}
		top["trusted_proxies"] = ps
	}
	if cfg.TrustedHops > 0 {
		top["trusted_hops"] = cfg.TrustedHops
	}
	if len(cfg.TrustedProxies) > 0 || cfg.TrustedHops > 0 {
		top["ip_source"] = cfg.IPSource
	}
	var pols []map[string]any
	for _, d := range cfg.Definitions {
		p := map[string]any{
			"name":      d.Name,
			"algorithm": d.Spec.Algorithm,
			"limit":     d.Spec.Limit,
			"window":    d.Spec.Window.String(),
			"key":       d.Key[0],
		}
		if d.OnMissingKey != policy.RejectBadRequest {
			// Written only when it is not the default: on a key found
			// for every request it is refused as never used.
			p["on_missing_key"] = map[policy.KeyAction]string{policy.RejectForbidden: "reject_403", policy.SkipPolicy: "skip"}[d.OnMissingKey]
		}
		if d.Spec.Burst != 0 {
			p["burst"] = d.Spec.Burst
		}
		if d.Spec.Buckets != 0 {
			p["buckets"] = d.Spec.Buckets
		}
		if d.Spec.MaxDelay != 0 {
			p["max_delay"] = d.Spec.MaxDelay.String()
		}
		if len(d.Key) > 1 {
			p["fallback"] = d.Key[1:]
		}
		if len(d.Methods) > 0 {
			p["methods"] = d.Methods
		}
		if len(d.Routes) > 0 {
			p["routes"] = d.Routes
		}
		pols = append(pols, p)
	}
	top["policies"] = pols
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		panic(err)
	}
	return out
}

// configSummary is what a Config says, positions and source aside.
type configSummary struct {
	Top         []any
	Definitions []policy.Definition
	Policies    []string
}

func summary(cfg *policy.Config) configSummary {
	proxies := cfg.TrustedProxies
	if len(proxies) == 0 {
		proxies = nil
	}
	s := configSummary{Top: []any{cfg.Version, cfg.Headers, cfg.FailureMode, cfg.FailureRetryAfter,
		proxies, cfg.TrustedHops, cfg.IPSource, cfg.IPv6Prefix, cfg.IPv4Prefix}}
	if len(cfg.TrustedProxies) == 0 && cfg.TrustedHops == 0 {
		s.Top[6] = "" // not read
	}
	for i, d := range cfg.Definitions {
		d.Line, d.Column = 0, 0
		if len(d.Methods) == 0 {
			d.Methods = nil
		}
		if len(d.Routes) == 0 {
			d.Routes = nil
		}
		s.Definitions = append(s.Definitions, d)
		s.Policies = append(s.Policies, cfg.Policies[i].String())
	}
	return s
}
