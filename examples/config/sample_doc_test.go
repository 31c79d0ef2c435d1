package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// commentAbove returns the comment lines right above the top-level field
// name of the YAML text, without their "#".
func commentAbove(t *testing.T, yaml, name string) string {
	t.Helper()
	lines := strings.Split(yaml, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, name+":") {
			continue
		}
		var c []string
		for j := i - 1; j >= 0 && strings.HasPrefix(lines[j], "#"); j-- {
			c = append([]string{strings.TrimPrefix(lines[j], "#")}, c...)
		}
		return strings.Join(c, "\n")
	}
	t.Fatalf("the sample has no top-level %s:", name)
	return ""
}

// names reports whether text has word as a word of its own: not part of
// a longer one (ietf of ietf-most-constraining).
func names(text, word string) bool {
	return regexp.MustCompile(`(^|[^a-z0-9_-])` + regexp.QuoteMeta(word) + `($|[^a-z0-9_-])`).MatchString(text)
}

// TestSampleListsChoices: where the annotated sample lists the values a
// field takes (the header profiles, the failure modes), it lists every
// one the configuration accepts. Its headers comment left out
// ietf-most-constraining, which the README's schema lists.
func TestSampleListsChoices(t *testing.T) {
	b, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sample := string(b)
	headers := commentAbove(t, sample, "headers")
	for _, p := range policy.HeaderProfiles {
		if !names(headers, string(p)) {
			t.Errorf("the sample's comment on headers does not list %q:\n%s", p, headers)
		}
	}
	modes := commentAbove(t, sample, "failure_mode")
	for _, m := range policy.FailureModes {
		if !names(modes, string(m)) {
			t.Errorf("the sample's comment on failure_mode does not list %q:\n%s", m, modes)
		}
	}
}
