package policy_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigYAMLTabIsNamed: a tab where YAML wants indentation was
// reported with the tab itself between quotes ("found character '	'"),
// which a terminal shows as blank space. The message now names it (\t),
// says to indent with spaces, and holds no control character (a message
// echoing the file's bytes must not carry them to a terminal or a log).
func TestConfigYAMLTabIsNamed(t *testing.T) {
	_, err := policy.ParseConfig([]byte("policies:\n\t- name: a\n"), "c.yaml")
	if err == nil {
		t.Fatal("ParseConfig accepted a tab-indented file")
	}
	msg := err.Error()
	if strings.ContainsFunc(msg, unicode.IsControl) {
		t.Errorf("message %q holds a control character", msg)
	}
	for _, want := range []string{"c.yaml:2:1", `'\t'`, "spaces"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
}
