package client_test

import (
	"testing"
	"time"
)

// A gateway and the application behind it may each write a RateLimit-Policy
// line, both naming their policy "default" (the drafts' own example name),
// and a RateLimit member without t says that "default" has no quota left.
// Which of the two it is cannot be told, so its w is read as cautiously as
// every other field of several lines: the longest window of the policies
// of that name, whatever the order of the lines (the gateway's hourly
// quota spent, a retry after the application's one second only earns
// another refusal).
func TestRateLimitPolicySameNameLongestWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
	}{
		{"longer first", []string{"RateLimit", `"default";r=0`,
			"RateLimit-Policy", `"default";q=100;w=30`, "RateLimit-Policy", `"default";q=10;w=1`}},
		{"longer last", []string{"RateLimit", `"default";r=0`,
			"RateLimit-Policy", `"default";q=10;w=1`, "RateLimit-Policy", `"default";q=100;w=30`}},
		{"one line", []string{"RateLimit", `"default";r=0`,
			"RateLimit-Policy", `"default";q=100;w=30, "default";q=10;w=1`}},
		{"shorter w invalid", []string{"RateLimit", `"default";r=0`,
			"RateLimit-Policy", `"default";q=100;w=30, "default";q=10;w=0`}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, 30*time.Second, tc.kv...) })
	}
}
