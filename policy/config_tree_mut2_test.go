package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigDocumentAfterEndMarker: an end marker ("...") closes a
// document, so content after it begins the second, and a file of three
// documents is refused at that one, the first line of the second
// document, not at the header of the third.
func TestConfigDocumentAfterEndMarker(t *testing.T) {
	const a = "policies:\n  - {name: a, limit: 1, window: 1s}\n"
	const b = "policies:\n  - {name: b, limit: 2, window: 1s}\n"
	doc := a + "...\n" + b + "---\n" + a
	_, err := policy.ParseConfig([]byte(doc), "docs.yaml")
	errs := policy.ConfigErrors(err)
	if len(errs) != 1 || !strings.Contains(errs[0].Reason, "more than one YAML document") || errs[0].Line != 4 {
		t.Errorf("ParseConfig(%q) = %v; want one error at line 4: more than one YAML document", doc, err)
	}
}

// TestConfigJSONPositionsAfterLeadingSpace: the lines and columns of a
// JSON configuration's errors count every byte from the start of the
// file, blank lines and spaces before the top-level value included.
func TestConfigJSONPositionsAfterLeadingSpace(t *testing.T) {
	for _, tc := range []struct {
		doc       string
		line, col int
	}{
		{`{"policies": 5}`, 1, 14},
		{"\n\n" + `{"policies": 5}`, 3, 14},
		{"   " + `{"policies": 5}`, 1, 17},
		{"\n  " + `{"policies": 5}`, 2, 16},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "c.json")
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Line != tc.line || ces[0].Column != tc.col {
			t.Errorf("ParseConfig(%q) = %v; want one error at %d:%d", tc.doc, err, tc.line, tc.col)
		}
	}
}
