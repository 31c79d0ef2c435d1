package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigKeyPartReadAsMapping: a policy written on one line, as the
// README's "- {name: daily, limit: 5000, window: 1d}", with the README's
// key list "[ip, header:X-Login-User]" inside it, reaches the decoder with
// header:X-Login-User as a one-entry mapping (the YAML parser reads it so
// inside a flow mapping; "header: X" with a space is one in any YAML). The
// error said only "must be a string, not a mapping"; it now shows what was
// read and how to write it.
func TestConfigKeyPartReadAsMapping(t *testing.T) {
	for _, src := range []string{
		"policies:\n  - {name: a, limit: 1, window: 1m, key: [ip, header:X-Login-User]}\n",
		"policies:\n  - name: a\n    limit: 1\n    window: 1m\n    key: [ip, header: X-Login-User]\n",
	} {
		_, err := policy.ParseConfig([]byte(src), "x.yaml")
		if err == nil {
			t.Errorf("ParseConfig(%q) = nil error, want one at key[1]", src)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "policies[0].key[1]") || !strings.Contains(msg, `"header:X-Login-User"`) {
			t.Errorf("ParseConfig(%q) error %q, want it at policies[0].key[1], suggesting \"header:X-Login-User\" quoted", src, msg)
		}
	}
}
