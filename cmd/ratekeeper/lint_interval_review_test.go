package main

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLintLeakyQueueIntervalBelowANanosecond: the advice on a leaky_queue
// without max_delay says how often it passes a request, window/limit. Of
// more than one request per nanosecond of window (2000000 per 1ms), the
// integer division said "every 0s", a queue that never spaces anything;
// it is 0.5ns.
func TestLintLeakyQueueIntervalBelowANanosecond(t *testing.T) {
	for _, tc := range []struct{ def, want string }{
		{"limit: 2000000, window: 1ms", "passes one request every 0.5ns "},
		{"limit: 1000000000, window: 1ms", "passes one request every 0.001ns "},
		{"limit: 1000000, window: 1ms", "passes one request every 1ns "},
		{"limit: 10, window: 1m", "passes one request every 6s "},
	} {
		doc := "policies:\n  - {name: q, algorithm: leaky_queue, " + tc.def + "}\n"
		cfg, err := policy.ParseConfig([]byte(doc), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, a := range lint(cfg) {
			if strings.Contains(a, "max_delay") {
				got = a
			}
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: advice %q, want it to say %q", tc.def, got, tc.want)
		}
	}
}
