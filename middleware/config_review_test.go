package middleware_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestApplyConfigUnknownSettings: a Config built in code (not by
// policy.Load, which checks them) may name a header profile or failure
// mode that does not exist. FromConfig refuses it; ApplyConfig applied its
// policies and said nothing of an unknown profile (an unknown mode was
// taken for "open"), so a typo went unnoticed until the next restart
// refused the file. It is refused, and the running policies stay.
func TestApplyConfigUnknownSettings(t *testing.T) {
	store, _ := newStore(t)
	m, err := middleware.FromConfig(store, mustConfig(t, "failure_mode: open\npolicies:\n  - {name: a, limit: 1, window: 1m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	next := mustConfig(t, "policies:\n  - {name: b, limit: 5, window: 1m}\n")
	for _, tt := range []struct {
		name, want string
		edit       func(*policy.Config)
	}{
		{"headers", `unknown profile "draft-8"`, func(c *policy.Config) { c.Headers = "draft-8" }},
		{"failure mode", `unknown mode "opne"`, func(c *policy.Config) { c.FailureMode = "opne" }},
	} {
		cfg := *next
		tt.edit(&cfg)
		if _, err := middleware.FromConfig(store, &cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: FromConfig = %v, want an error saying %s", tt.name, err, tt.want)
		}
		if err := m.ApplyConfig(&cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ApplyConfig = %v, want an error saying %s", tt.name, err, tt.want)
		}
		if got := m.Set().Policies()[0].Name(); got != "a" {
			t.Errorf("%s: policy %s in force after a refused configuration, want a", tt.name, got)
		}
	}
}
