package policy_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigExplicitKey: YAML's explicit key ("? key" then ": value") is
// another spelling of "key: value", and loads as it. It was refused as
// "unsupported YAML node MappingKey", a name from the parser's source
// that told the user nothing. An explicit key without a value is null, as
// "limit:" is; one that is a collection the parser refuses.
func TestConfigExplicitKey(t *testing.T) {
	const doc = "? policies\n: - name: a\n    ? limit\n    : 5\n    ? window\n    : 1m\n"
	cfg, err := policy.ParseConfig([]byte(doc), "k.yaml")
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if s := cfg.Policies[0].Spec(); s.Limit != 5 || s.Window != time.Minute {
		t.Errorf("policy a = %v, want 5 per 1m", s)
	}
	wantRefused(t, "policies:\n  - ? name\n    : a\n    ? limit\n    ? window\n    : 1s\n", "k.yaml",
		[]string{"4:8 policies[0].limit: must be an integer, not null"})
	wantRefused(t, "? [policies]\n: []\n", "k.yaml", []string{"2:1 : invalid YAML: found an invalid key for this map"})
}
