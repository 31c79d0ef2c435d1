package policy_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigCount: a policy's count field builds CountIf with the ready
// counts; a value out of the enum is reported at its field.
func TestConfigCount(t *testing.T) {
	cfg, err := policy.ParseConfig([]byte(`policies:
  - {name: login, limit: 5, window: 1m, count: failed}
  - {name: work, limit: 5, window: 1m, count: succeeded}
  - {name: all, limit: 5, window: 1m, count: all}
  - {name: plain, limit: 5, window: 1m}
`), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/login", nil)
	for i, want := range []struct {
		count          string
		counts200, all bool
		counts401      bool
	}{
		{"failed", false, false, true},
		{"succeeded", true, false, false},
		{"all", true, true, true},
		{"", true, true, true},
	} {
		p := cfg.Policies[i]
		if d := cfg.Definitions[i]; d.Count != want.count {
			t.Errorf("%s: Count %q, want %q", p.Name(), d.Count, want.count)
		}
		if p.Counts(r, 200) != want.counts200 || p.Counts(r, 401) != want.counts401 || p.CountsAll() != want.all {
			t.Errorf("%s: counts 200 %v, 401 %v, all %v; want %v %v %v", p.Name(), p.Counts(r, 200), p.Counts(r, 401), p.CountsAll(), want.counts200, want.counts401, want.all)
		}
	}
	_, err = policy.ParseConfig([]byte("policies:\n  - {name: login, limit: 5, window: 1m, count: failures}\n"), "c.yaml")
	if err == nil || !strings.Contains(err.Error(), "policies[0].count") || !strings.Contains(err.Error(), "want one of all, failed, succeeded") {
		t.Errorf("count: failures: %v, want an error at policies[0].count naming the values", err)
	}
}
