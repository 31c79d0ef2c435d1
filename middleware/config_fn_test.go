package middleware_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFromConfigErrorsNameFromConfig: FromConfig's errors for a nil or
// unusable Config name FromConfig, the function called, and the field.
// They named ConfigOptions, which FromConfig calls, and which the caller
// may never have heard of ("middleware: ConfigOptions: config is nil").
func TestFromConfigErrorsNameFromConfig(t *testing.T) {
	store, _ := newStore(t)
	good := mustConfig(t, "policies:\n  - {name: a, limit: 1, window: 1m}\n")
	for _, tc := range []struct {
		name  string
		cfg   *policy.Config
		field string
	}{
		{"nil", nil, "config is nil"},
		{"headers", &policy.Config{Policies: good.Policies, Headers: "draft-99"}, "headers"},
		{"failure mode", &policy.Config{Policies: good.Policies, FailureMode: "sideways"}, "failure_mode"},
	} {
		_, err := middleware.FromConfig(store, tc.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), "middleware: FromConfig: ") || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("FromConfig(%s) = %v, want an error of FromConfig naming %s", tc.name, err, tc.field)
		}
	}
	if _, err := middleware.ConfigOptions(nil, nil); err == nil || !strings.HasPrefix(err.Error(), "middleware: ConfigOptions: ") {
		t.Errorf("ConfigOptions(nil) = %v, want an error of ConfigOptions", err)
	}
}
