package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// YAML 1.1 readers (PyYAML, go-yaml v2, the Kubernetes tools built on it)
// and this loader's (YAML 1.2) read some plain values differently: what
// one reads one way, another reads another, silently. Where the loader
// would take such a value, it refuses it, saying how to write what is
// meant.

// TestConfigIntegerUnderscores: an underscore between two digits groups
// them (1_000_000), as every reader that takes underscores reads it. One
// that separates no two digits (10_, 1__0) was dropped: 10_ loaded as 10,
// most likely 10_000 cut short; YAML 1.1 readers read 10 too, others a
// string. It is refused.
func TestConfigIntegerUnderscores(t *testing.T) {
	limit := func(v string) string { return "policies:\n  - {name: p, window: 1s, limit: " + v + "}\n" }
	for _, tc := range []struct {
		v    string
		want int64
	}{
		{"1_000", 1000},
		{"1_000_000", 1_000_000},
		{"+1_0", 10},
		{"10", 10},
	} {
		cfg, err := policy.ParseConfig([]byte(limit(tc.v)), "c.yaml")
		if err != nil || cfg.Policies[0].Spec().Limit != tc.want {
			t.Errorf("limit: %s: %v, want %d", tc.v, err, tc.want)
		}
	}
	for _, v := range []string{"10_", "1__0", "1_", "1_000_", "+1__0"} {
		_, err := policy.ParseConfig([]byte(limit(v)), "c.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "policies[0].limit" || errs[0].Line != 2 ||
			!strings.Contains(errs[0].Reason, v) || !strings.Contains(errs[0].Reason, "underscore") {
			t.Errorf("limit: %s: %v, want one error at policies[0].limit naming %s and its underscore", v, err, v)
		}
	}
	// Every integer field reads them so.
	_, err := policy.ParseConfig([]byte("trusted_hops: 1_\nip_source: x-forwarded-for\npolicies:\n  - {name: p, limit: 1, window: 1s}\n"), "c.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "trusted_hops" {
		t.Errorf("trusted_hops: 1_: %v, want one error at trusted_hops", err)
	}
}

// TestConfigYAML11Booleans: name: no loaded as the string "no", which
// YAML 1.1 readers read as the boolean false (a tool that reads the file
// so, a linter or a template, sees another policy). A plain value that is
// a boolean in YAML 1.1 (y, yes, on, off, n, no in their three cases),
// or a date (2024-01-31), is refused where the loader would take it as a
// string (a policy's name, a method), with the quoting that means the
// string; quoted, or in JSON, it is the string.
func TestConfigYAML11Booleans(t *testing.T) {
	for _, w := range []string{"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "2024-01-31"} {
		_, err := policy.ParseConfig([]byte("policies:\n  - {name: "+w+", limit: 1, window: 1s}\n"), "c.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "policies[0].name" || errs[0].Line != 2 || errs[0].Column != 12 ||
			!strings.Contains(errs[0].Reason, "YAML 1.1") || !strings.Contains(errs[0].Reason, `"`+w+`"`) {
			t.Errorf("name: %s: %v, want one error at 2:12 policies[0].name saying YAML 1.1 reads it otherwise, and to quote it", w, err)
		}
		for _, doc := range []string{
			"policies:\n  - {name: \"" + w + "\", limit: 1, window: 1s}\n",
			"policies:\n  - {name: '" + w + "', limit: 1, window: 1s}\n",
			`{"policies": [{"name": "` + w + `", "limit": 1, "window": "1s"}]}`,
		} {
			cfg, err := policy.ParseConfig([]byte(doc), "c.yaml")
			if err != nil || cfg.Policies[0].Name() != w {
				t.Errorf("%s: %v, want the name %q", doc, err, w)
			}
		}
	}
	_, err := policy.ParseConfig([]byte("policies:\n  - {name: p, limit: 1, window: 1s, methods: [GET, ON]}\n"), "c.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "policies[0].methods[1]" || !strings.Contains(errs[0].Reason, `"ON"`) {
		t.Errorf("methods: [GET, ON]: %v, want one error at policies[0].methods[1]", err)
	}
	// Not YAML 1.1 booleans: read as they are.
	for _, w := range []string{"nope", "y1", "oN", "yES", "NOPE", "off-peak", "2024-01-31x"} {
		cfg, err := policy.ParseConfig([]byte("policies:\n  - {name: "+w+", limit: 1, window: 1s}\n"), "c.yaml")
		if err != nil || cfg.Policies[0].Name() != w {
			t.Errorf("name: %s: %v, want the name %q", w, err, w)
		}
	}
}

// TestConfigYAML11Sexagesimal: a plain trusted_proxies entry of decimal
// groups joined by ':' (an IPv6 address written out, 1:2:3:4:5:6:7:8) is
// an address to this loader and an integer in base 60 to YAML 1.1
// readers: refused, to be quoted; one with a hex digit, "::" or a prefix
// length is not such an integer.
func TestConfigYAML11Sexagesimal(t *testing.T) {
	const pol = "policies:\n  - {name: p, limit: 1, window: 1s}\n"
	_, err := policy.ParseConfig([]byte("trusted_proxies: [10.0.0.1, 1:2:3:4:5:6:7:8]\n"+pol), "c.yaml")
	if errs := policy.ConfigErrors(err); len(errs) != 1 || errs[0].Field != "trusted_proxies[1]" ||
		!strings.Contains(errs[0].Reason, "YAML 1.1") || !strings.Contains(errs[0].Reason, `"1:2:3:4:5:6:7:8"`) {
		t.Errorf("trusted_proxies: [10.0.0.1, 1:2:3:4:5:6:7:8]: %v, want one error at trusted_proxies[1]", err)
	}
	for _, v := range []string{`"1:2:3:4:5:6:7:8"`, "2001:db8::1", "fe80::1", "1:2:3:4:5:6:7:8/128", "10.0.0.0/8"} {
		if _, err := policy.ParseConfig([]byte("trusted_proxies: ["+v+"]\n"+pol), "c.yaml"); err != nil {
			t.Errorf("trusted_proxies: [%s]: %v, want it read", v, err)
		}
	}
}
