package main

import (
	"fmt"
	"testing"
)

// TestCheckAdviceGlobalKey: a key global is one allowance shared by all
// clients, and draws the advice (with a fallback, never tried, the file is
// refused: policy's TestConfigDeadFallbackIsRefused); global joined with
// another part (global+ip) is one allowance per client, and draws none.
func TestCheckAdviceGlobalKey(t *testing.T) {
	const advice = "all (line 2): key global on every request: one allowance shared by all clients, which one client can use up"
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"key: global", []string{advice}},
		{"key: [global, ip]", nil},
		{"key: ip", nil},
	} {
		got := checkAdvice(t, "policies:\n  - name: all\n    limit: 5\n    window: 1m\n    "+tc.key+"\n")
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: advice %q, want %q", tc.key, got, tc.want)
		}
	}
}
